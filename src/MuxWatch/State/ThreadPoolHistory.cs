using MuxWatch.Model;

namespace MuxWatch.State;

/// <summary>
/// The thread pool as the probe loop sampled it, the last <see cref="Capacity"/> samples: what the pool
/// was just before a request started waiting, so that starvation that arose during the wait (the
/// consequence of a stall) can be told from starvation that was there first (a cause).
/// </summary>
/// <remarks>A fixed ring written by the loop's one thread and read by the pipeline's callers under a lock: a few samples a second.</remarks>
internal sealed class ThreadPoolHistory
{
    /// <summary>Samples kept: a minute at the default one-second probe interval.</summary>
    internal const int Capacity = 64;

    private readonly (DateTimeOffset Time, ThreadPoolSnapshot Pool)[] _samples = new (DateTimeOffset, ThreadPoolSnapshot)[Capacity];
    private readonly Lock _gate = new();
    private int _count;
    private int _next;

    /// <summary>Keeps one sample.</summary>
    public void Add(DateTimeOffset time, ThreadPoolSnapshot pool)
    {
        lock (_gate)
        {
            _samples[_next] = (time, pool);
            _next = (_next + 1) % Capacity;
            _count = Math.Min(_count + 1, Capacity);
        }
    }

    /// <summary>
    /// True when a sample from <paramref name="from"/> to <paramref name="to"/> found the pool calm (nothing queued, no
    /// more busy threads than its minimum), or when none covers that span at all: then it cannot be said that one
    /// starvation lasted through it. False only when every sample over it found the pool starved.
    /// </summary>
    public bool CalmOrUnknownBetween(DateTimeOffset from, DateTimeOffset to)
    {
        lock (_gate)
        {
            var seen = false;
            var covered = false;
            for (var i = 0; i < _count; i++)
            {
                var (time, pool) = _samples[i];
                covered |= time <= from;
                if (time >= from && time <= to)
                {
                    seen = true;
                    if (pool.IsCalm)
                    {
                        return true;
                    }
                }
            }

            // A span shorter than a probe cycle may hold no sample: the history reaching back to it covers it.
            return !(seen || (covered && to - from <= TimeSpan.FromSeconds(2)));
        }
    }

    /// <summary>
    /// When the starvation that <paramref name="time"/> lies in began: the time of the newest calm sample before it (or the
    /// oldest sample kept, when every one kept is starved), provided the pool was starved at every sample from then to
    /// <paramref name="time"/> and one of them is within <paramref name="nearerThan"/> of it. Null when the pool was calm,
    /// or not sampled, just before <paramref name="time"/>: no starvation leads up to it.
    /// </summary>
    public DateTimeOffset? StarvedSince(DateTimeOffset time, TimeSpan nearerThan)
    {
        lock (_gate)
        {
            DateTimeOffset? newestCalm = null, newestStarved = null, oldest = null;
            for (var i = 0; i < _count; i++)
            {
                var (at, pool) = _samples[i];
                if (at > time)
                {
                    continue;
                }

                oldest = oldest is { } o && o <= at ? o : at;
                if (pool.IsCalm)
                {
                    newestCalm = newestCalm is { } c && c >= at ? c : at;
                }
                else
                {
                    newestStarved = newestStarved is { } s && s >= at ? s : at;
                }
            }

            if (newestStarved is not { } starved || starved < time - nearerThan || (newestCalm is { } calm && calm > starved))
            {
                return null;
            }

            return newestCalm ?? oldest;
        }
    }

    /// <summary>The oldest sample taken from <paramref name="from"/> to <paramref name="to"/>; null when none was.</summary>
    public ThreadPoolSnapshot? FirstBetween(DateTimeOffset from, DateTimeOffset to)
    {
        lock (_gate)
        {
            (DateTimeOffset Time, ThreadPoolSnapshot Pool)? first = null;
            for (var i = 0; i < _count; i++)
            {
                var sample = _samples[i];
                if (sample.Time >= from && sample.Time <= to && (first is null || sample.Time < first.Value.Time))
                {
                    first = sample;
                }
            }

            return first?.Pool;
        }
    }

    /// <summary>True when the newest sample found the pool starved or with work queued (not calm); false when calm, or none was taken.</summary>
    public bool NewestIsStarved()
    {
        lock (_gate)
        {
            return _count > 0 && !_samples[(_next + Capacity - 1) % Capacity].Pool.IsCalm;
        }
    }

    /// <summary>
    /// The newest sample taken at or before <paramref name="time"/> and no more than <paramref name="notOlderThan"/>
    /// before it; null when there is none (the loop had not run yet, or the history has moved past it).
    /// </summary>
    public ThreadPoolSnapshot? At(DateTimeOffset time, TimeSpan notOlderThan)
    {
        lock (_gate)
        {
            (DateTimeOffset Time, ThreadPoolSnapshot Pool)? best = null;
            for (var i = 0; i < _count; i++)
            {
                var sample = _samples[i];
                if (sample.Time <= time && sample.Time >= time - notOlderThan && (best is null || sample.Time > best.Value.Time))
                {
                    best = sample;
                }
            }

            return best?.Pool;
        }
    }
}
