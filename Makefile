# vfwarp: top-level entry points. See README.md.
#   make demo    boot the emulated lab (two hypervisor hosts) and show what works
#   make test    everything CI runs: native tier, Linux interop, lab tier (boots emulated hosts)
#   make check   fast native tier (vswitch, adapter, launcher basics, lint)
#   make bench   benchmarks; JSON results under bench/results/
#   make soak    the 10-minute soak of 128 VFs with faults (issue 33); bench/results/soak.json
# Every target installs what it needs (Debian packages, Python modules) and
# builds what it needs; heavy builds are cached outside the clone
# (~/.cache/vfwarp, or $VFWARP_CACHE).
SHELL   := /bin/bash
PYTHON  ?= python3
PYTEST  := $(PYTHON) tools/run-pytest
CORES   := vswitch adapter
FUZZ_SMOKE_RUNS ?= 2000

.PHONY: all deps pydeps check test test-prep fuzz-smoke net-test lab-test demo bench bench-native bench-lab soak qemu image modules provider siw tools tenant provisioning-check clean clean-cache

all: check

deps:
	@tools/install-deps
pydeps:
	@$(PYTHON) -c 'import pytest, yaml, jsonschema' 2>/dev/null || $(PYTHON) -m pip install -q -r requirements.txt

# ---- native tier -----------------------------------------------------------
check: deps pydeps
	@set -e; for c in $(CORES); do \
	  if [ -f $$c/Makefile ]; then echo "==> make -C $$c test"; $(MAKE) -s -C $$c test; fi; done
	@echo "==> launcher and wire unit tests"; $(PYTEST) -q tests/unit
	@echo "==> PF manager (vfwarpctl) unit tests"; $(PYTEST) -q pf-driver/manager/tests
	@$(MAKE) -s provisioning-check
	@echo "==> lint"; $(PYTHON) -m py_compile lab/vfwarp_lab/*.py tests/*/*.py tests/lab/lib/*.py tools/run-pytest $$(find pf-driver/manager/vfwarp_manager pf-driver/manager/tests -name '*.py') pf-driver/manager/vfwarpctl
	@bash -n lab/*.sh lab/tenant/init tools/install-deps tools/make-test .ci/run provisioning/*.sh

# The Ansible collection (provisioning/): lint (production profile), ansible-test
# sanity, the policy module's logic and the lab inventory, natively.
provisioning-check: pydeps
	@echo "==> ansible-lint --profile production"; cd provisioning && PATH="$$(./install-ansible.sh | tail -n1):$$PATH" ansible-lint --profile production
	@echo "==> ansible-test sanity"; provisioning/sanity.sh
	@echo "==> provisioning: module logic, lab inventory"; $(PYTEST) -q tests/provisioning

# ---- lab tier --------------------------------------------------------------
qemu: deps
	@lab/build-qemu.sh
image: deps
	@lab/build-image.sh
modules: image
	@lab/build-modules.sh
# The rdma-core provider (libvfwarp), built in the image's rdma-core tree.
provider: image
	@lab/build-provider.sh
# Linux soft-iWARP (siw.ko, not in Debian's kernel config), the software iWARP
# peer of the interop tests, from the guest kernel package's own source.
siw: image
	@lab/build-siw.sh
# Verbs test programs (tools/verbs/) for the lab hosts, built in the image.
tools: image
	@lab/build-tools.sh

# The tenant image (L2): guest kernel + an initramfs root with vfwarp_vf,
# rdma-core and the provider, perftest, iperf3, sshd.
tenant: modules provider
	@lab/build-tenant.sh

# The lab tier runs as two pytest sessions side by side, each on its own lab
# (tools/lab-tier says why). Each test's duration is also kept beside the cache
# (reports/lab-tier-SESSION.xml, JUnit) so the next session can see where the
# tier's time went.
LAB_REPORTS := $(or $(VFWARP_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vfwarp)/reports
lab-test: qemu modules provider siw tools tenant pydeps
	@$(PYTHON) tools/lab-tier $(LAB_REPORTS)

# Interop of the adapter's TCP and iWARP engine with Linux over a TAP device
# in a private network namespace (root; traffic never leaves the namespace).
net-test: deps
	@echo "==> adapter interop with Linux (TAP in a private netns)"
	@$(MAKE) -s -C adapter interop-tcp interop-iwarp

# Every fuzz target builds and runs briefly (the long runs are by hand; see docs).
fuzz-smoke: deps
	@set -e; for c in $(CORES); do echo "==> make -C $$c fuzz (smoke)"; \
	  $(MAKE) -s -C $$c fuzz FUZZ_RUNS=$(FUZZ_SMOKE_RUNS); done

# The native tier runs while the lab's artifacts build beside it (tools/make-test).
test:
	@tools/make-test
test-prep:
	@tools/make-test --no-lab

demo: qemu modules provider tenant pydeps
	@lab/demo.sh

bench: bench-native bench-lab
	@echo "results:"; ls -1 bench/results/*.json 2>/dev/null || echo "  (none)"

bench-native: deps
	@set -e; for c in $(CORES); do \
	  if [ -f $$c/Makefile ]; then echo "==> make -C $$c bench"; $(MAKE) -s -C $$c bench; fi; done

# Boots two lab hosts: iperf3 VF-to-VF across the wire next to virtio-net;
# then iWARP RDMA through the VFs next to virtio-net TCP, VF TCP and siw
# (JSON + PNG plot; matplotlib from PyPI for the plot), at MTU 1500 and 9000;
# and vfwarpctl's apply/re-apply/plan of 128 VFs and 32 tenants (issue 19).
bench-lab: qemu modules provider siw pydeps
	@echo "==> VF-to-VF iperf3 vs virtio-net (lab)"; $(PYTHON) bench/vf_iperf.py --secs 5 --reps 3
	@$(PYTHON) -c 'import matplotlib' 2>/dev/null || $(PYTHON) -m pip install -q matplotlib
	@echo "==> iWARP RDMA through VFs vs virtio-net TCP, VF TCP, siw (lab)"; $(PYTHON) bench/verbs_bench.py --secs 3
	@echo "==> the same at MTU 9000 on both paths (lab)"; $(PYTHON) bench/verbs_bench.py --secs 3 --sizes 65536,262144 --mtu 9000
	@echo "==> 8-byte round trip with the device model's thread at the vCPUs' priority and above (lab)"; $(PYTHON) bench/device_priority.py --reps 3 --secs 10
	@echo "==> vfwarpctl: 128 VFs / 32 tenants applied, re-applied, planned (lab)"; $(PYTHON) bench/policy_bench.py --reps 3

# The soak of issue 33 (not in `make test`; its short variant is, in
# tests/lab/test_soak.py): 128 VFs on h1, 3 QPs each to h2, every byte of
# SEND/WRITE/READ checked for 10 minutes while faults are injected at random;
# boots a lab of its own unless VFWARP_LAB_REUSE names one. SOAK_ARGS adds
# options (bench/soak.py --help), e.g. SOAK_ARGS='--seed 7'.
soak: qemu modules provider tools pydeps
	@$(PYTHON) bench/soak.py $(SOAK_ARGS)

clean:
	rm -rf build
	@for c in $(CORES); do [ -f $$c/Makefile ] && $(MAKE) -s -C $$c clean || true; done

# Drops QEMU, images and venvs: the next build starts cold.
clean-cache:
	rm -rf "$${VFWARP_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/vfwarp}"
