/* The floor under bench/batch.sh's 40 exact thumbnails: libavformat + libavcodec alone, NCLIPS times one context
 * on CLIP, each seeking to the keyframe before 1.5, 4, 6.5 and 9 s and decoding up to the picture there, with
 * THREADS frame threads; prints how many pictures it decoded. Run as two processes of 5 clips to match two
 * workers (docs/PERFORMANCE.md, "ftgst batch").
 *
 *   cc -O2 -o /tmp/batchfloor bench/lib/batchfloor.c $(pkg-config --cflags --libs libavformat libavcodec libavutil)
 *   /tmp/batchfloor .build/bench/gop30.mp4 1 5 & /tmp/batchfloor .build/bench/gop30.mp4 1 5; wait
 */
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <stdio.h>
#include <stdlib.h>
static int times_ms[4] = {1500, 4000, 6500, 9000};
int main(int argc, char **argv) {
  const char *path = argv[1]; int threads = atoi(argv[2]); int nclips = atoi(argv[3]); long total = 0;
  for (int c = 0; c < nclips; c++) {
    AVFormatContext *fmt = NULL;
    if (avformat_open_input(&fmt, path, NULL, NULL) < 0) return 1;
    avformat_find_stream_info(fmt, NULL);
    int si = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    AVStream *st = fmt->streams[si];
    const AVCodec *dec = avcodec_find_decoder(st->codecpar->codec_id);
    AVCodecContext *ctx = avcodec_alloc_context3(dec);
    avcodec_parameters_to_context(ctx, st->codecpar); ctx->thread_count = threads;
    avcodec_open2(ctx, dec, NULL);
    AVPacket *p = av_packet_alloc(); AVFrame *f = av_frame_alloc();
    for (int t = 0; t < 4; t++) {
      int64_t target = (int64_t)(times_ms[t] / 1000.0 / av_q2d(st->time_base));
      av_seek_frame(fmt, si, target, AVSEEK_FLAG_BACKWARD); avcodec_flush_buffers(ctx);
      int done = 0;
      while (!done && av_read_frame(fmt, p) >= 0) {
        if (p->stream_index == si) { avcodec_send_packet(ctx, p);
          while (avcodec_receive_frame(ctx, f) == 0) { total++; if (f->best_effort_timestamp >= target) { done = 1; break; } } }
        av_packet_unref(p);
      }
    }
    av_frame_free(&f); av_packet_free(&p); avcodec_free_context(&ctx); avformat_close_input(&fmt);
  }
  fprintf(stderr, "decoded %ld\n", total); return 0;
}
