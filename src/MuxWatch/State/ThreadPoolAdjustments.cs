using MuxWatch.Model;

namespace MuxWatch.State;

/// <summary>
/// The thread-count changes the runtime's thread pool made, with its reason, for the last
/// <see cref="Capacity"/> of them: what the diagnosis reads over a request's wait ("the runtime added threads
/// because pool threads blocked on tasks"). Written by the runtime's event dispatch, read by the pipeline.
/// </summary>
internal sealed class ThreadPoolAdjustments
{
    /// <summary>Adjustments kept: hill climbing makes a few a second at most, a blocking burst a few dozen.</summary>
    internal const int Capacity = 1024;

    private readonly (DateTimeOffset Time, ThreadPoolAdjustmentReason Reason)[] _ring = new (DateTimeOffset, ThreadPoolAdjustmentReason)[Capacity];
    private readonly Lock _gate = new();
    private int _count;
    private int _next;

    /// <summary>Keeps one adjustment the runtime made at <paramref name="time"/> for <paramref name="reason"/>.</summary>
    public void Note(DateTimeOffset time, ThreadPoolAdjustmentReason reason)
    {
        lock (_gate)
        {
            _ring[_next] = (time, reason);
            _next = (_next + 1) % Capacity;
            _count = Math.Min(_count + 1, Capacity);
        }
    }

    /// <summary>How many adjustments for <paramref name="reason"/> the runtime made between <paramref name="from"/> and <paramref name="to"/>.</summary>
    public int Count(ThreadPoolAdjustmentReason reason, DateTimeOffset from, DateTimeOffset to)
    {
        lock (_gate)
        {
            var found = 0;
            for (var i = 0; i < _count; i++)
            {
                if (_ring[i].Reason == reason && _ring[i].Time >= from && _ring[i].Time <= to)
                {
                    found++;
                }
            }

            return found;
        }
    }
}
