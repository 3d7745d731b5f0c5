// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_irq.c - the PF's MSI-X vectors. PCI allows one allocation per
 * function, and several parts of the driver need vectors (the netdev's
 * link/RX/TX, the VF->PF mailbox), so probe allocates all of them here once
 * and each part only request_irq()s its own fixed vector (VFW_PF_VEC_*).
 */
#include <linux/pci.h>

#include "pf.h"

int vfw_pf_irq_init(struct vfw_pf *pf)
{
	int nvec;

	nvec = pci_alloc_irq_vectors(pf->pdev, VFW_PF_NUM_VEC, VFW_PF_NUM_VEC,
				     PCI_IRQ_MSIX);
	if (nvec < 0) {
		dev_err(&pf->pdev->dev, "cannot get %d MSI-X vectors: %d\n",
			VFW_PF_NUM_VEC, nvec);
		return nvec;
	}
	return 0;
}

/* After every user has freed its vector. */
void vfw_pf_irq_fini(struct vfw_pf *pf)
{
	pci_free_irq_vectors(pf->pdev);
}
