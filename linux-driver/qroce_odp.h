/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The pages of an ODP umem as the device's table wants them: what
 * ib_umem_odp_map_dma_and_lock() found or faulted in, DMA-mapped here
 * through the umem's hmm_dma_map.
 */
#ifndef QROCE_ODP_H
#define QROCE_ODP_H

#include <linux/hmm.h>
#include <linux/hmm-dma.h>
#include <linux/pci-p2pdma.h>
#include <rdma/ib_umem_odp.h>

/*
 * Page @idx of @odp (mapped, umem_mutex held): its DMA address in *@dma
 * and whether the device may write it in *@write.  -ENOENT if the page
 * is not there, -EFAULT if it cannot be mapped.
 */
static inline int qroce_odp_page_dma(struct ib_umem_odp *odp, size_t idx,
				     dma_addr_t *dma, bool *write)
{
	struct ib_device *ibdev = odp->umem.ibdev;
	unsigned long pfn = odp->map.pfn_list[idx];
	struct pci_p2pdma_map_state p2p = {};

	if (!(pfn & HMM_PFN_VALID))
		return -ENOENT;
	*dma = hmm_dma_map_pfn(ibdev->dma_device, &odp->map, idx, &p2p);
	if (ib_dma_mapping_error(ibdev, *dma))
		return -EFAULT;
	/* ib_umem_odp_unmap_dma_pages() counts the mapped pages down */
	if (!(pfn & HMM_PFN_DMA_MAPPED))
		odp->npages++;
	*write = pfn & HMM_PFN_WRITE;
	return 0;
}

#endif /* QROCE_ODP_H */
