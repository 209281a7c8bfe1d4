using MuxWatch.Model;
using MuxWatch.Pipeline;

namespace MuxWatch.Sinks;

/// <summary>The most recent timeouts, newest first, in a fixed-size ring: memory stays bounded whatever the rate.</summary>
public sealed class RecentTimeouts : ITimeoutSink
{
    private readonly ObservedTimeout?[] _ring;
    private readonly Lock _gate = new();
    private long _added;

    /// <summary>Creates a log that keeps the last <paramref name="capacity"/> timeouts.</summary>
    internal RecentTimeouts(int capacity = 1000)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(capacity, 1);
        _ring = new ObservedTimeout?[capacity];
    }

    /// <summary>How many timeouts the log keeps.</summary>
    public int Capacity => _ring.Length;

    /// <summary>How many were ever added, including those since pushed out.</summary>
    public long TotalAdded => Interlocked.Read(ref _added);

    /// <summary>Adds one, pushing out the oldest when full.</summary>
    internal void Add(ObservedTimeout timeout)
    {
        ArgumentNullException.ThrowIfNull(timeout);
        lock (_gate)
        {
            _ring[_added % _ring.Length] = timeout;
            _added++;
        }
    }

    /// <inheritdoc />
    void ITimeoutSink.Publish(ObservedTimeout timeout) => Add(timeout);

    /// <inheritdoc />
    // Explicit: the interface's default (a no-op) must never stand in for this one, whatever this one's visibility.
    void ITimeoutSink.Revise(ObservedTimeout previous, ObservedTimeout revised) => Revise(previous, revised);

    /// <summary>Replaces a kept timeout by its revision (same id); one already pushed out stays out.</summary>
    internal void Revise(ObservedTimeout previous, ObservedTimeout revised)
    {
        ArgumentNullException.ThrowIfNull(previous);
        ArgumentNullException.ThrowIfNull(revised);
        lock (_gate)
        {
            for (var i = 0; i < _ring.Length; i++)
            {
                if (_ring[i] is { } kept && kept.Id == previous.Id && ReferenceEquals(kept, previous))
                {
                    _ring[i] = revised;
                    return;
                }
            }
        }
    }

    /// <summary>The kept timeout numbered <paramref name="id"/>, or null when it was never recorded or has been pushed out.</summary>
    public ObservedTimeout? Find(long id)
    {
        lock (_gate)
        {
            // A scan of at most Capacity entries: a page's lookup, not a hot path.
            var kept = Math.Min(_added, _ring.Length);
            for (var i = 0L; i < kept; i++)
            {
                if (_ring[(_added - 1 - i) % _ring.Length] is { } timeout && timeout.Id == id)
                {
                    return timeout;
                }
            }

            return null;
        }
    }

    /// <summary>Up to <paramref name="limit"/> timeouts, newest first; only those with an id below <paramref name="before"/> when given (the next page).</summary>
    public IReadOnlyList<ObservedTimeout> Newest(int limit = int.MaxValue, long? before = null)
    {
        lock (_gate)
        {
            var kept = (int)Math.Min(_added, _ring.Length);
            var result = new List<ObservedTimeout>(Math.Min(kept, Math.Max(0, limit)));
            for (var i = 0; i < kept && result.Count < limit; i++)
            {
                var timeout = _ring[(_added - 1 - i) % _ring.Length]!;
                if (before is not { } cursor || timeout.Id < cursor)
                {
                    result.Add(timeout);
                }
            }

            return result;
        }
    }
}
