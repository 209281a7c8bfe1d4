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
