/* The floor under a scaled JPEG decode: TurboJPEG alone, in one process, on one file, at 1/SCALE
 * (1, 2, 4 or 8), five times; prints each decode's time. No start-up, no file read, no resize or encode
 * inside the timing, so it is what no thumbnailer built on libjpeg-turbo can go under (docs/PERFORMANCE.md).
 *
 *   cc -O2 -o /tmp/tjfloor bench/lib/tjfloor.c -lturbojpeg && /tmp/tjfloor .build/bench/photo24mp.jpg 8
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <turbojpeg.h>

static double ms_since(const struct timespec *a) {
    struct timespec z;
    clock_gettime(CLOCK_MONOTONIC, &z);
    return (double)(z.tv_sec - a->tv_sec) * 1e3 + (double)(z.tv_nsec - a->tv_nsec) / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s FILE.jpg SCALE(1|2|4|8)\n", argv[0]); return 2; }
    int scale = atoi(argv[2]);
    if (scale != 1 && scale != 2 && scale != 4 && scale != 8) { fprintf(stderr, "bad SCALE\n"); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    if (fseek(f, 0, SEEK_END) != 0) { perror("fseek"); return 1; }
    long n = ftell(f);
    rewind(f);
    unsigned char *jpeg = malloc((size_t)n);
    if (!jpeg || fread(jpeg, 1, (size_t)n, f) != (size_t)n) { fprintf(stderr, "read failed\n"); return 1; }
    fclose(f);
    tjhandle h = tjInitDecompress();
    int w, hgt, subsamp, colorspace;
    if (!h || tjDecompressHeader3(h, jpeg, (unsigned long)n, &w, &hgt, &subsamp, &colorspace) != 0) {
        fprintf(stderr, "not a JPEG TurboJPEG reads: %s\n", tjGetErrorStr2(h));
        return 1;
    }
    int ow = (w + scale - 1) / scale, oh = (hgt + scale - 1) / scale;
    unsigned char *rgb = malloc((size_t)ow * (size_t)oh * 3);
    if (!rgb) return 1;
    for (int i = 0; i < 5; i++) {
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        if (tjDecompress2(h, jpeg, (unsigned long)n, rgb, ow, 0, oh, TJPF_RGB, 0) != 0) {
            fprintf(stderr, "decode failed: %s\n", tjGetErrorStr2(h));
            return 1;
        }
        printf("%dx%d at 1/%d -> %dx%d: %.1f ms\n", w, hgt, scale, ow, oh, ms_since(&start));
    }
    tjDestroy(h);
    free(rgb);
    free(jpeg);
    return 0;
}
