// libavformat (FFmpeg): the Matroska/WebM muxer, for recordings ffprobe and every player read.
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>

/// AV_NOPTS_VALUE is a macro with a cast, which Swift does not import.
static const int64_t peer_av_nopts_value = AV_NOPTS_VALUE;
