using MuxWatch.Model;

namespace MuxWatch.State;

/// <summary>
/// One endpoint's key sizes: the keys the diagnosis wants measured (a huge value behind <c>large-payload</c>
/// timeouts), taken by the server poller one at a time, and what the server answered, kept a while so that every
/// timeout of the same wait reads one answer and the server is asked once. Bounded whatever the timeouts name.
/// </summary>
internal sealed class KeySizeLedger
{
    /// <summary>The longest key ever asked about: a key longer than this is named, never measured.</summary>
    internal const int MaxKeyLength = 1024;

    /// <summary>Keys waiting to be measured, at most; more are not asked about.</summary>
    internal const int MaxWanted = 8;

    /// <summary>Answers kept, at most; the oldest goes first.</summary>
    internal const int MaxKnown = 64;

    /// <summary>How long an answer stands before a key is asked about again.</summary>
    internal static readonly TimeSpan KeptFor = TimeSpan.FromMinutes(10);

    private readonly Lock _gate = new();
    private readonly List<string> _wanted = [];
    private readonly Dictionary<string, (KeySize Size, DateTimeOffset At)> _known = new(StringComparer.Ordinal);

    /// <summary>Asks for <paramref name="key"/>'s size at the next polls, unless it is known, already asked for, or too long.</summary>
    internal void Want(string key, DateTimeOffset now)
    {
        ArgumentNullException.ThrowIfNull(key);
        if (key.Length is 0 or > MaxKeyLength)
        {
            return;
        }

        lock (_gate)
        {
            if (KnownLocked(key, now) is null && !_wanted.Contains(key) && _wanted.Count < MaxWanted)
            {
                _wanted.Add(key);
            }
        }
    }

    /// <summary>The next key to measure, taken off the list (the poller asks for at most one a poll); null when none.</summary>
    public string? TakeWanted()
    {
        lock (_gate)
        {
            if (_wanted.Count == 0)
            {
                return null;
            }

            var key = _wanted[0];
            _wanted.RemoveAt(0);
            return key;
        }
    }

    /// <summary>What the server answered for <paramref name="key"/> within the last <see cref="KeptFor"/>; null when not asked yet.</summary>
    internal KeySize? Known(string key, DateTimeOffset now)
    {
        lock (_gate)
        {
            return KnownLocked(key, now);
        }
    }

    /// <summary>Keeps what the server answered.</summary>
    internal void Note(KeySize size, DateTimeOffset now)
    {
        ArgumentNullException.ThrowIfNull(size);
        lock (_gate)
        {
            _wanted.Remove(size.Key);
            if (_known.Count >= MaxKnown && !_known.ContainsKey(size.Key))
            {
                _known.Remove(_known.MinBy(entry => entry.Value.At).Key);
            }

            _known[size.Key] = (size, now);
        }
    }

    private KeySize? KnownLocked(string key, DateTimeOffset now) =>
        _known.TryGetValue(key, out var entry) && now - entry.At <= KeptFor ? entry.Size : null;
}
