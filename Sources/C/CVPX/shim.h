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

/// Constants whose macros Swift imports with the wrong type or not at all, as plain values.
static const unsigned int peer_vpx_frame_is_key = VPX_FRAME_IS_KEY;
static const long peer_vpx_eflag_force_kf = VPX_EFLAG_FORCE_KF;
static const unsigned long peer_vpx_dl_realtime = VPX_DL_REALTIME;
static const unsigned int peer_vpx_error_resilient_default = VPX_ERROR_RESILIENT_DEFAULT;

/// vpx_codec_control is a macro dispatching on the control id: one typed helper per control.
static inline vpx_codec_err_t peer_vp8e_set_cpuused(vpx_codec_ctx_t *ctx, int value) {
    return vpx_codec_control_(ctx, VP8E_SET_CPUUSED, value);
}
static inline vpx_codec_err_t peer_vp8e_set_static_threshold(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control_(ctx, VP8E_SET_STATIC_THRESHOLD, value);
}
static inline vpx_codec_err_t peer_vp8e_set_noise_sensitivity(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control_(ctx, VP8E_SET_NOISE_SENSITIVITY, value);
}
static inline vpx_codec_err_t peer_vp8e_set_token_partitions(vpx_codec_ctx_t *ctx, int value) {
    return vpx_codec_control_(ctx, VP8E_SET_TOKEN_PARTITIONS, value);
}
static inline vpx_codec_err_t peer_vp8e_set_max_intra_bitrate_pct(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control_(ctx, VP8E_SET_MAX_INTRA_BITRATE_PCT, value);
}
static inline vpx_codec_err_t peer_vp8e_get_last_quantizer_64(vpx_codec_ctx_t *ctx, int *value) {
    return vpx_codec_control_(ctx, VP8E_GET_LAST_QUANTIZER_64, value);
}
static inline vpx_codec_err_t peer_vp8d_get_frame_corrupted(vpx_codec_ctx_t *ctx, int *corrupted) {
    return vpx_codec_control_(ctx, VP8D_GET_FRAME_CORRUPTED, corrupted);
}
/// The quantizer index (0–127, RFC 6386 §9.6's y_ac_qi) of the last decoded frame.
static inline vpx_codec_err_t peer_vpxd_get_last_quantizer(vpx_codec_ctx_t *ctx, int *value) {
    return vpx_codec_control_(ctx, VPXD_GET_LAST_QUANTIZER, value);
}
