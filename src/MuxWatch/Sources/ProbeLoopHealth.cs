using System.ComponentModel;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;

namespace MuxWatch.Sources;

/// <summary>Whether the probe loop is cycling: the sidecar's <c>/healthz</c> and the status answer read it.</summary>
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): for MuxWatch's own packages, not apps
public sealed class ProbeLoopHealth
{
    private readonly TimeProvider _time;
    private readonly IOptions<MuxWatchOptions> _options;
    private readonly DateTimeOffset _started;
    private long _lastCycleTicks;
    private long _cycles;

    /// <summary>The loop's health on <paramref name="time"/>'s clock, its interval from <paramref name="options"/>.</summary>
    internal ProbeLoopHealth(TimeProvider time, IOptions<MuxWatchOptions> options)
    {
        _time = time;
        _options = options;
        _started = time.GetUtcNow();
    }

    /// <summary>Cycles completed since start.</summary>
    public long Cycles => Interlocked.Read(ref _cycles);

    /// <summary>When the last cycle completed, or null before the first.</summary>
    internal DateTimeOffset? LastCycle => Interlocked.Read(ref _lastCycleTicks) is var ticks and > 0
        ? new DateTimeOffset(ticks, TimeSpan.Zero)
        : null;

    /// <summary>How long without a completed cycle counts as stalled: three intervals, and at least 10 s.</summary>
    internal TimeSpan StallAfter => TimeSpan.FromTicks(Math.Max(_options.Value.ProbeInterval.Ticks * 3, TimeSpan.FromSeconds(10).Ticks));

    /// <summary>True when a cycle completed within <see cref="StallAfter"/> (or the loop has just started).</summary>
    public bool IsCycling(out string description)
    {
        var last = LastCycle;
        var now = _time.GetUtcNow();
        if (last is null)
        {
            description = "the probe loop has not completed a cycle yet";
            return now - _started < StallAfter;
        }

        var age = now - last.Value;
        description = $"last probe cycle {age.TotalSeconds:0.0} s ago ({Cycles} cycles)";
        return age < StallAfter;
    }

    internal void CycleCompleted(DateTimeOffset at)
    {
        Interlocked.Exchange(ref _lastCycleTicks, at.UtcTicks);
        Interlocked.Increment(ref _cycles);
    }
}
