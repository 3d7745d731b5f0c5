"""libvirt around a running host: the network hook and the hold that keeps a
pool VF at its tenant's settings. Imports txn/, layers/, policy/, the top."""
