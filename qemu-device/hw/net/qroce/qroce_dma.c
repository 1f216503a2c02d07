/*
 * qroce: DMA.  Every guest memory access of the device goes through
 * qroce_dma_copy() and reaches guest RAM only, translated by the vIOMMU
 * when there is one.  The lowest layer but the wire codec: it calls
 * nothing of the device.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "system/dma.h"
#include "system/memory_cached.h"
#include "qroce_dma.h"
#include "trace.h"

/* An IOMMU in front of an IOMMU in front of ... RAM: how deep we follow. */
#define QROCE_DMA_IOMMU_DEPTH 4

/*
 * One piece of a DMA copy at @addr of @as, at most @len bytes: how many
 * bytes were copied (0: refused).  The piece is translated, copied from or
 * to its RAM pointer and marked dirty (for migration and TCG's code cache)
 * from one snapshot of the address space (a MemoryRegionCache).  Behind a
 * vIOMMU, the IOMMU's own translation names the address space and address
 * the piece is then looked up in, with its permission checked.
 */
static uint64_t qroce_dma_piece(AddressSpace *as, hwaddr addr, uint8_t *b,
                                uint64_t len, bool to_guest, int depth)
{
    MemoryRegionCache c = { 0 };
    MemoryRegion *mr;
    uint64_t done = 0;
    int64_t l;

    RCU_READ_LOCK_GUARD();
    l = address_space_cache_init(&c, as, addr, len, to_guest);
    mr = c.mrs.mr;
    if (l > 0 && !c.ptr && memory_region_is_iommu(mr) &&
        depth < QROCE_DMA_IOMMU_DEPTH) {
        IOMMUMemoryRegion *iommu = IOMMU_MEMORY_REGION(mr);
        IOMMUAccessFlags need = to_guest ? IOMMU_WO : IOMMU_RO;
        IOMMUTLBEntry e = memory_region_get_iommu_class_nocheck(iommu)->
            translate(iommu, c.xlat, need,
                      memory_region_iommu_attrs_to_index(
                          iommu, MEMTXATTRS_UNSPECIFIED));

        if ((e.perm & need) == need && e.target_as) {
            hwaddr in = c.xlat & e.addr_mask;

            done = qroce_dma_piece(e.target_as,
                                   (e.translated_addr & ~e.addr_mask) | in, b,
                                   MIN((uint64_t)l, e.addr_mask - in + 1),
                                   to_guest, depth + 1);
        }
    } else if (l > 0 && c.ptr && memory_region_is_ram(mr) &&
               !memory_region_is_ram_device(mr) &&
               !(to_guest && mr->readonly)) {
        done = MIN((uint64_t)l, len);
        if (to_guest) {
            memcpy(c.ptr, b, done);
            address_space_cache_invalidate(&c, 0, done);
        } else {
            memcpy(b, c.ptr, done);
        }
    }
    address_space_cache_destroy(&c);
    return done;
}

/*
 * Payload to or from guest memory, one piece of guest RAM at a time
 * (qroce_dma_piece()): a vCPU that turns Bus Master Enable off or remaps
 * memory meanwhile (the engine may run in an IOThread) changes later
 * pieces, never the one being copied.  Anything but guest RAM -- MMIO (the
 * device's own BARs among it), ROM, unassigned space, a page the vIOMMU
 * does not map for this direction -- fails: nothing is bounced and the
 * engine never makes an MMIO access.  The caller turns a failure into an
 * error CQE, a command error or FATAL.
 */
bool qroce_dma_copy(QRoceState *s, uint64_t addr, void *buf,
                    uint64_t len, bool to_guest)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    uint8_t *b = buf;

    while (len) {
        uint64_t n = addr + len < addr ? 0 :
                     qroce_dma_piece(as, addr, b, len, to_guest, 0);

        if (!n) {
            trace_qroce_ub_dma(to_guest ? "write" : "read", addr, len);
            return false;
        }
        addr += n;
        b += n;
        len -= n;
    }
    return true;
}
