// ToneGenerator: a sine-tone audio source, 16-bit PCM at 48 kHz, mono or stereo.
import Foundation

/// A sine-tone source: 16-bit PCM at 48 kHz, mono or stereo (the same signal in both
/// channels), in phase-continuous blocks with running timestamps.
public struct ToneGenerator: Sendable {
    /// Tone frequency in Hz (``setFrequency(_:)`` changes it, the phase continuing).
    public private(set) var frequency: Double
    /// Peak level in dBFS: 0 dBFS is a sine whose peaks reach 32767 (AES17), −12 dBFS peaks at 8231.
    public let levelDBFS: Double
    /// Channel count: 1 or 2.
    public let channels: Int
    /// 48 kHz timestamp of the next block (the samples generated so far, per channel).
    public private(set) var nextTimestamp: Int64

    private var generated: Int64 = 0
    /// The phase (radians) at sample index `originIndex`, where the current frequency began.
    private var phaseOrigin = 0.0, originIndex: Int64 = 0
    private let template: AudioFrame

    /// Peak amplitude in sample units: `32767 × 10^(levelDBFS / 20)`.
    public var amplitude: Double { 32767 * pow(10, levelDBFS / 20) }

    /// Creates a tone starting at phase 0 and timestamp `startTimestamp` (48 kHz ticks).
    ///
    /// Throws ``MediaFrameError/badChannelCount(_:)`` unless `channels` is 1 or 2.
    /// Frequencies above 24 kHz alias; levels above 0 dBFS clip.
    public init(frequency: Double, levelDBFS: Double, channels: Int = 1, startTimestamp: Int64 = 0) throws(MediaFrameError) {
        guard channels == 1 || channels == 2 else { throw .badChannelCount(channels) }
        self.frequency = frequency
        self.levelDBFS = levelDBFS
        self.channels = channels
        nextTimestamp = startTimestamp
        template = try AudioFrame(channels: channels, samples: [], timestamp: startTimestamp)
    }

    /// The next `sampleCount` samples per channel (0 or more; negative counts give an empty
    /// block), continuing the phase of the previous block, stamped with ``nextTimestamp``.
    public mutating func next(sampleCount: Int) -> AudioFrame {
        let count = max(0, sampleCount)
        var samples = [Int16](repeating: 0, count: count * channels)
        let a = amplitude
        let step = 2 * Double.pi * frequency / Double(AudioFrame.sampleRate)
        let start = nextTimestamp
        for i in 0..<count {
            // The phase comes from the running sample index, so blocks join without drift
            // however they are cut.
            let index = Double(generated + Int64(i) - originIndex)
            let value = (a * sin(phaseOrigin + step * index)).rounded()
            let s = Int16(clamping: Int(max(-32768, min(32767, value))))
            for c in 0..<channels { samples[i * channels + c] = s }
        }
        nextTimestamp += Int64(count)
        generated += Int64(count)
        var frame = template
        frame.samples = samples
        frame.timestamp = start
        return frame
    }

    /// Plays `hz` from the next sample on, the phase continuing (no click).
    public mutating func setFrequency(_ hz: Double) {
        let step = 2 * Double.pi * frequency / Double(AudioFrame.sampleRate)
        phaseOrigin = (phaseOrigin + step * Double(generated - originIndex)).truncatingRemainder(dividingBy: 2 * Double.pi)
        originIndex = generated
        frequency = hz
    }
}
