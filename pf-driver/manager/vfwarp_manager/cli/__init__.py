"""vfwarpctl's commands (vfwarpctl: the parser, validate, plan, schema; txn:
apply, rollback, commit, status, drift; vf: reapply-vf and the libvirt
hook). On top: nothing imports it but the vfwarpctl script."""
