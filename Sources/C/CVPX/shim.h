// libvpx: VP8 encoder and decoder.
#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>

/// vpx_codec_enc_init is a macro passing VPX_ENCODER_ABI_VERSION, which Swift cannot import.
static inline vpx_codec_err_t peer_vpx_codec_enc_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                                      const vpx_codec_enc_cfg_t *cfg, vpx_codec_flags_t flags) {
    return vpx_codec_enc_init_ver(ctx, iface, cfg, flags, VPX_ENCODER_ABI_VERSION);
}
/// vpx_codec_dec_init is a macro passing VPX_DECODER_ABI_VERSION, which Swift cannot import.
static inline vpx_codec_err_t peer_vpx_codec_dec_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                                      const vpx_codec_dec_cfg_t *cfg, vpx_codec_flags_t flags) {
    return vpx_codec_dec_init_ver(ctx, iface, cfg, flags, VPX_DECODER_ABI_VERSION);
}
