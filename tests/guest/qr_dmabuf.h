/*
 * dma-bufs for the guest test programs: a memfd that udmabuf exports.
 * Include it after defining _GNU_SOURCE (memfd_create, file seals).
 */
#ifndef QR_DMABUF_H
#define QR_DMABUF_H

#include <fcntl.h>
#include <stdint.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * @len bytes (whole pages, zeroed) of a memfd, mapped shared at *@va, and
 * exported by udmabuf: the dma-buf's file descriptor (close-on-exec), or
 * -1 with errno set.
 */
static inline int qr_udmabuf(size_t len, uint8_t **va)
{
    struct udmabuf_create uc = { .flags = UDMABUF_FLAGS_CLOEXEC,
                                 .size = len };
    int mfd = memfd_create("qroce-dmabuf", MFD_ALLOW_SEALING);
    int dev = open("/dev/udmabuf", O_RDWR);
    int fd = -1;

    if (mfd >= 0 && dev >= 0 && !ftruncate(mfd, len) &&
        !fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
        uc.memfd = mfd;
        fd = ioctl(dev, UDMABUF_CREATE, &uc);
    }
    if (fd >= 0) {
        *va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
        if (*va == MAP_FAILED) {
            close(fd);
            fd = -1;
        }
    }
    if (dev >= 0) {
        close(dev);
    }
    if (mfd >= 0) {
        close(mfd);
    }
    return fd;
}

#endif
