using MuxWatch.Model;

namespace MuxWatch.State;

/// <summary>
/// The witness's latest prompt answers to its PINGs, a fixed ring (one a second or so per endpoint: events
/// would flood the timeline), for the correlator to ask whether the server answered during a wait.
/// </summary>
internal sealed class WitnessAnswers(int capacity)
{
    private readonly Lock _gate = new();
    private readonly WitnessAnswer[] _ring = new WitnessAnswer[capacity];
    private int _count;
    private int _next;

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
            _ring[_next] = new WitnessAnswer(sent, answered);
            _next = (_next + 1) % _ring.Length;
            _count = Math.Min(_count + 1, _ring.Length);
        }
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
