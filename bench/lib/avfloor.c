/* The floor under one exact thumbnail of an H.264 clip: libavformat + libavcodec alone seek to the keyframe before
 * SECONDS, decode up to the picture at SECONDS with THREADS frame threads (0: libavcodec's choice), and exit. No
 * conversion, scaling, encoding or file written: what no thumbnailer built on libavcodec can go under, timed as a
 * whole process against ffmpeg's thumbnail command (docs/PERFORMANCE.md, "fth264dec").
 *
 *   cc -O2 -o /tmp/avfloor bench/lib/avfloor.c $(pkg-config --cflags --libs libavformat libavcodec libavutil)
 *   /tmp/avfloor .build/bench/clip1080.mp4 5.5 2
 */
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  const char *path = argv[1]; double t = atof(argv[2]); int threads = atoi(argv[3]);
  AVFormatContext *fmt = NULL;
  if (avformat_open_input(&fmt, path, NULL, NULL) < 0) return 1;
  if (avformat_find_stream_info(fmt, NULL) < 0) return 1;
  int si = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
  AVStream *st = fmt->streams[si];
  const AVCodec *dec = avcodec_find_decoder(st->codecpar->codec_id);
  AVCodecContext *c = avcodec_alloc_context3(dec);
  avcodec_parameters_to_context(c, st->codecpar);
  c->thread_count = threads;
  if (avcodec_open2(c, dec, NULL) < 0) return 1;
  int64_t target = (int64_t)(t / av_q2d(st->time_base));
  av_seek_frame(fmt, si, target, AVSEEK_FLAG_BACKWARD);
  AVPacket *p = av_packet_alloc(); AVFrame *f = av_frame_alloc(); int n = 0, done = 0;
  while (!done && av_read_frame(fmt, p) >= 0) {
    if (p->stream_index == si) {
      avcodec_send_packet(c, p);
      while (avcodec_receive_frame(c, f) == 0) { n++; if (f->best_effort_timestamp >= target) { done = 1; break; } }
    }
    av_packet_unref(p);
  }
  fprintf(stderr, "decoded %d frames %dx%d\n", n, f->width, f->height);
  return 0;
}
