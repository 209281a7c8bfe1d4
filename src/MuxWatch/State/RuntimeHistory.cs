using MuxWatch.Model;

namespace MuxWatch.State;

/// <summary>
/// This process's runtime as MuxWatch's dedicated thread sampled it, every tick (about 100 ms) for the last
/// <see cref="Capacity"/> ticks: cumulative GC pause, CPU time and late wakes, so that what happened over a
/// request's wait is the difference of two samples.
/// </summary>
/// <remarks>
/// A fixed ring written by one thread and read by the pipeline's callers under a lock. Sampled on a thread
/// of its own because the pool may be the very thing that is starved, and a sample that waits for a pool
/// thread would miss what it is there to see.
/// </remarks>
internal sealed class RuntimeHistory
{
    /// <summary>Samples kept: a minute at the 100 ms tick, longer than any timeout worth reading.</summary>
    internal const int Capacity = 600;

    /// <summary>How often the dedicated thread samples (<c>WitnessThread.Tick</c>).</summary>
    internal static readonly TimeSpan Tick = TimeSpan.FromMilliseconds(100);

    /// <summary>Thread-pool adjustments kept: the runtime makes a few a second at most.</summary>
    internal const int AdjustmentCapacity = 512;

    private readonly (DateTimeOffset Time, ThreadPoolAdjustmentReason Reason)[] _adjustments = new (DateTimeOffset, ThreadPoolAdjustmentReason)[AdjustmentCapacity];
    private int _adjustmentCount;
    private int _nextAdjustment;
    private readonly Sample[] _samples = new Sample[Capacity];
    private readonly Lock _gate = new();
    private int _count;
    private int _next;

    /// <summary>Samples kept (at most <see cref="Capacity"/>): one a tick, so the ring reaches back <see cref="Capacity"/> ticks.</summary>
    internal int Count
    {
        get
        {
            lock (_gate)
            {
                return _count;
            }
        }
    }

    /// <summary>Keeps one sample of the cumulative figures at <paramref name="time"/>.</summary>
    public void Add(DateTimeOffset time, double gcPauseMs, double cpuMs, double lateWakeMs)
    {
        lock (_gate)
        {
            _samples[_next] = new Sample(time, gcPauseMs, cpuMs, lateWakeMs);
            _next = (_next + 1) % Capacity;
            _count = Math.Min(_count + 1, Capacity);
        }
    }

    /// <summary>Keeps one of the runtime's thread-pool adjustments (its reason), heard at <paramref name="time"/>.</summary>
    public void AddAdjustment(DateTimeOffset time, ThreadPoolAdjustmentReason reason)
    {
        lock (_gate)
        {
            _adjustments[_nextAdjustment] = (time, reason);
            _nextAdjustment = (_nextAdjustment + 1) % AdjustmentCapacity;
            _adjustmentCount = Math.Min(_adjustmentCount + 1, AdjustmentCapacity);
        }
    }

    /// <summary>
    /// What happened between <paramref name="from"/> and <paramref name="to"/>: the difference between the
    /// newest sample at or before <paramref name="from"/> and the oldest at or after <paramref name="to"/>
    /// (or, when the catch came before the next tick, the runtime read now at <paramref name="now"/>, if that
    /// is within a tick of the catch). Null when the samples do not reach back to the start (MuxWatch
    /// started during the wait, or the wait is older than the ring). With <paramref name="starvedSince"/> (the pool
    /// starved at every sample from then to <paramref name="from"/>), the runtime's adjustments in that starvation
    /// before the wait are counted too: it adds a thread for each worker as it blocks, not again for as long as it stays blocked.
    /// </summary>
    public RuntimeOverWait? Over(DateTimeOffset from, DateTimeOffset to, DateTimeOffset now, int cores, DateTimeOffset? starvedSince = null)
    {
        lock (_gate)
        {
            Sample? start = null, end = null, newest = null, before = null;
            for (var i = 0; i < _count; i++)
            {
                var sample = _samples[i];
                if (sample.Time <= from - RuntimeOverWait.Before && (before is null || sample.Time > before.Value.Time))
                {
                    before = sample;
                }

                if (sample.Time <= from && (start is null || sample.Time > start.Value.Time))
                {
                    start = sample;
                }

                if (sample.Time >= to && (end is null || sample.Time < end.Value.Time))
                {
                    end = sample;
                }

                if (newest is null || sample.Time > newest.Value.Time)
                {
                    newest = sample;
                }
            }

            if (end is null && newest is { } latest && now >= to && now - to <= Tick)
            {
                // The catch came between two ticks: read the runtime now rather than leave out the wait's end.
                end = new Sample(now, GC.GetTotalPauseDuration().TotalMilliseconds, Environment.CpuUsage.TotalTime.TotalMilliseconds, latest.LateWakeMs);
            }

            end ??= newest;
            if (start is not { } first || end is not { } last || last.Time <= first.Time)
            {
                return null;
            }

            return new RuntimeOverWait(
                (last.Time - first.Time).TotalMilliseconds,
                Math.Max(0, last.GcPauseMs - first.GcPauseMs),
                Math.Max(0, last.CpuMs - first.CpuMs),
                Math.Max(0, last.LateWakeMs - first.LateWakeMs),
                cores)
            {
                GcPauseBeforeMs = before is { } earlier ? Math.Max(0, first.GcPauseMs - earlier.GcPauseMs) : 0,
                BlockingAdjustments = AdjustmentsLocked(from, to, blocking: true),
                OtherAdjustments = AdjustmentsLocked(from, to, blocking: false),
                StarvedSince = starvedSince < from ? starvedSince : null,
                BlockingAdjustmentsBefore = starvedSince is { } since && since < from ? AdjustmentsLocked(since, from.AddTicks(-1), blocking: true) : 0,
                RuntimeEventsHeard = _adjustmentCount > 0,
            };
        }
    }

    /// <summary>The adjustments in [<paramref name="from"/>, <paramref name="to"/>] for threads blocked on tasks, or for any other reason.</summary>
    private int AdjustmentsLocked(DateTimeOffset from, DateTimeOffset to, bool blocking)
    {
        var count = 0;
        for (var i = 0; i < _adjustmentCount; i++)
        {
            if ((_adjustments[i].Reason == ThreadPoolAdjustmentReason.CooperativeBlocking) == blocking && _adjustments[i].Time >= from && _adjustments[i].Time <= to)
            {
                count++;
            }
        }

        return count;
    }

    private readonly record struct Sample(DateTimeOffset Time, double GcPauseMs, double CpuMs, double LateWakeMs);
}
