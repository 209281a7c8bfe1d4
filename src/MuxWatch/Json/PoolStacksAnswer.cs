using MuxWatch.Model;

namespace MuxWatch.Json;

/// <summary>The thread pool's stack captures in <c>/status</c>: the last few, whether one runs, why none can be taken.</summary>
/// <param name="Capturing">True while a capture is under way.</param>
/// <param name="Unavailable">Why no capture is ever taken in this process (off, diagnostics disabled, Native AOT); null when one can be.</param>
/// <param name="Captures">The last captures, newest first.</param>
public sealed record PoolStacksAnswer(bool Capturing, string? Unavailable, IReadOnlyList<PoolStackCapture> Captures);
