using MuxWatch.Model;

namespace MuxWatch.State;

/// <summary>
/// The witness's latest prompt answers to its PINGs, a ring (one every half second to two seconds per endpoint: events
/// would flood the timeline), for the correlator to ask whether the server answered during a wait. It keeps at least
/// <see cref="KeptFor"/> of answers, up to <see cref="MaxCapacity"/>: it starts small and doubles only when the answer
/// it would drop is younger than that.
/// </summary>
/// <remarks>
/// Sized by time, not by count: a sidecar's 500 endpoints, each PINGed every 2 s, kept 256 answers each (8 minutes,
/// 2 MB of its heap) where the correlator reads the seconds of a wait; 64 hold two minutes of them, over the 90 s kept
/// whatever the jitter of the thread's ticks (issue 52). An app's witness, PINGed every 500 ms or every 200 ms while a
/// timeout waits, grows to the same 256 as before.
/// </remarks>
internal sealed class WitnessAnswers(int initialCapacity = WitnessAnswers.InitialCapacity)
{
    /// <summary>The answers kept at first.</summary>
    internal const int InitialCapacity = 64;

    /// <summary>The most answers kept, whatever their pace: most of a minute at the hurried 200 ms.</summary>
    internal const int MaxCapacity = 256;

    /// <summary>How long answers are kept at least (while <see cref="MaxCapacity"/> allows).</summary>
    internal static readonly TimeSpan KeptFor = TimeSpan.FromSeconds(90);

    private readonly Lock _gate = new();
    private WitnessAnswer[] _ring = new WitnessAnswer[initialCapacity];
    private int _count;
    private int _next;

    /// <summary>How many answers the ring holds room for now (tests read it).</summary>
    internal int Capacity
    {
        get
        {
            lock (_gate)
            {
                return _ring.Length;
            }
        }
    }

    /// <summary>The latest answer kept; null before the first.</summary>
    public WitnessAnswer? Last
    {
        get
        {
            lock (_gate)
            {
                return _count == 0 ? null : _ring[(_next + _ring.Length - 1) % _ring.Length];
            }
        }
    }

    /// <summary>Keeps one answer (to a PING sent at <paramref name="sent"/>), dropping the oldest when full.</summary>
    public void Note(DateTimeOffset sent, DateTimeOffset answered)
    {
        lock (_gate)
        {
            if (_count == _ring.Length && _ring.Length < MaxCapacity && _ring[_next].Answered > answered - KeptFor)
            {
                Grow(); // the oldest answer is younger than what is kept at least: room for more rather than drop it
            }

            _ring[_next] = new WitnessAnswer(sent, answered);
            _next = (_next + 1) % _ring.Length;
            _count = Math.Min(_count + 1, _ring.Length);
        }
    }

    /// <summary>Doubles the ring (within <see cref="MaxCapacity"/>), oldest first, the next answer written after the last.</summary>
    private void Grow()
    {
        var grown = new WitnessAnswer[Math.Min(MaxCapacity, _ring.Length * 2)];
        for (var i = 0; i < _count; i++)
        {
            grown[i] = _ring[(_next + i) % _ring.Length];
        }

        (_ring, _next) = (grown, _count);
    }

    /// <summary>The answers to PINGs sent at or after <paramref name="from"/> and answered by <paramref name="to"/>, oldest first.</summary>
    public IReadOnlyList<WitnessAnswer> Within(DateTimeOffset from, DateTimeOffset to)
    {
        lock (_gate)
        {
            var found = new List<WitnessAnswer>();
            for (var i = 0; i < _count; i++)
            {
                if (_ring[i].Sent >= from && _ring[i].Answered <= to)
                {
                    found.Add(_ring[i]);
                }
            }

            found.Sort(static (a, b) => a.Sent.CompareTo(b.Sent));
            return found;
        }
    }

    /// <summary>The latest answer at or before <paramref name="time"/>; null when none is kept.</summary>
    public DateTimeOffset? LastBefore(DateTimeOffset time)
    {
        lock (_gate)
        {
            DateTimeOffset? last = null;
            for (var i = 0; i < _count; i++)
            {
                var answered = _ring[i].Answered;
                if (answered <= time && (last is null || answered > last))
                {
                    last = answered;
                }
            }

            return last;
        }
    }
}
