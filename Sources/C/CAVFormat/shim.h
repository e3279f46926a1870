// libavformat (FFmpeg): the Matroska/WebM muxer, for recordings ffprobe and every player read —
// loaded with dlopen on first use (peer_av_load), not linked: libavformat and libavcodec bring
// about 110 shared libraries (x265, aom, cairo, X11, …) that every `peer` start would map.
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>
#include <dlfcn.h>
#include <stddef.h>

/// AV_NOPTS_VALUE is a macro with a cast, which Swift does not import.
static const int64_t peer_av_nopts_value = AV_NOPTS_VALUE;

#define PEER_AV_STR2(x) #x
#define PEER_AV_STR(x) PEER_AV_STR2(x)
/// The soname of the libavformat the headers belong to ("libavformat.so.59").
#define PEER_AV_SONAME "libavformat.so." PEER_AV_STR(LIBAVFORMAT_VERSION_MAJOR)
static const char *const peer_av_soname = PEER_AV_SONAME;

/// The libav functions MatroskaWriter calls, with the headers' own prototypes.
#define PEER_AV_FN(name) __typeof__(name) *name
typedef struct peer_av_api {
    PEER_AV_FN(avformat_version);
    PEER_AV_FN(avformat_alloc_output_context2);
    PEER_AV_FN(avformat_free_context);
    PEER_AV_FN(avformat_new_stream);
    PEER_AV_FN(avformat_write_header);
    PEER_AV_FN(av_interleaved_write_frame);
    PEER_AV_FN(av_write_trailer);
    PEER_AV_FN(avio_open);
    PEER_AV_FN(avio_closep);
    PEER_AV_FN(av_packet_alloc);
    PEER_AV_FN(av_packet_free);
    PEER_AV_FN(av_new_packet);
    PEER_AV_FN(av_rescale_q);
    PEER_AV_FN(av_strerror);
    PEER_AV_FN(av_log_set_level);
    PEER_AV_FN(av_mallocz);
    PEER_AV_FN(av_dict_set);
    PEER_AV_FN(av_dict_free);
    PEER_AV_FN(av_channel_layout_default);
} peer_av_api;

/// Loads libavformat and fills `api` with its functions: 0, or -1 with the reason in
/// *failure (dlerror's text, or the missing symbol). Call once (MatroskaWriter keeps the
/// result in a Swift `static let`, initialised once and thread-safely).
static inline int peer_av_load(peer_av_api *api, const char **failure) {
    void *lib = dlopen(PEER_AV_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) { *failure = dlerror(); return -1; }
#define PEER_AV_SYM(name) \
    if (!(api->name = (__typeof__(name) *)dlsym(lib, #name))) { *failure = "symbol " #name " not found in " PEER_AV_SONAME; return -1; }
    PEER_AV_SYM(avformat_version) PEER_AV_SYM(avformat_alloc_output_context2) PEER_AV_SYM(avformat_free_context)
    PEER_AV_SYM(avformat_new_stream) PEER_AV_SYM(avformat_write_header) PEER_AV_SYM(av_interleaved_write_frame)
    PEER_AV_SYM(av_write_trailer) PEER_AV_SYM(avio_open) PEER_AV_SYM(avio_closep) PEER_AV_SYM(av_packet_alloc)
    PEER_AV_SYM(av_packet_free) PEER_AV_SYM(av_new_packet) PEER_AV_SYM(av_rescale_q) PEER_AV_SYM(av_strerror)
    PEER_AV_SYM(av_log_set_level) PEER_AV_SYM(av_mallocz) PEER_AV_SYM(av_dict_set) PEER_AV_SYM(av_dict_free)
    PEER_AV_SYM(av_channel_layout_default)
#undef PEER_AV_SYM
    return 0;
}

/// The libavformat version the headers describe (major, minor, micro packed as avformat_version()).
static const unsigned peer_av_header_version = LIBAVFORMAT_VERSION_INT;
