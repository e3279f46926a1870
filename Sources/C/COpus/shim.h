// libopus: Opus encoder and decoder (RFC 6716).
#include <opus/opus.h>

/// opus_encoder_ctl is variadic and its requests are macros: one typed helper per request.
static inline int peer_opus_set_bitrate(OpusEncoder *e, opus_int32 bps) { return opus_encoder_ctl(e, OPUS_SET_BITRATE(bps)); }
static inline int peer_opus_set_inband_fec(OpusEncoder *e, opus_int32 on) { return opus_encoder_ctl(e, OPUS_SET_INBAND_FEC(on)); }
static inline int peer_opus_set_packet_loss_perc(OpusEncoder *e, opus_int32 pct) { return opus_encoder_ctl(e, OPUS_SET_PACKET_LOSS_PERC(pct)); }
static inline int peer_opus_set_dtx(OpusEncoder *e, opus_int32 on) { return opus_encoder_ctl(e, OPUS_SET_DTX(on)); }
static inline int peer_opus_get_lookahead(OpusEncoder *e, opus_int32 *samples) { return opus_encoder_ctl(e, OPUS_GET_LOOKAHEAD(samples)); }
static inline int peer_opus_set_complexity(OpusEncoder *e, opus_int32 c) { return opus_encoder_ctl(e, OPUS_SET_COMPLEXITY(c)); }
