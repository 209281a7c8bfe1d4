using MuxWatch.Model;

namespace MuxWatch.State;

/// <summary>
/// One endpoint's key sizes as the server answered them (<c>MEMORY USAGE</c> of a huge value behind <c>large-payload</c>
/// timeouts, asked through <see cref="Pipeline.IServerPollRequests"/>), kept a while so that every timeout of the same
/// wait reads one answer and the server is asked once. Bounded whatever the timeouts name.
/// </summary>
internal sealed class KeySizeLedger
{
    /// <summary>Answers kept, at most; the oldest goes first.</summary>
    internal const int MaxKnown = 64;

    /// <summary>How long an answer stands before a key is asked about again.</summary>
    internal static readonly TimeSpan KeptFor = TimeSpan.FromMinutes(10);

    private readonly Lock _gate = new();
    private readonly Dictionary<string, (KeySize Size, DateTimeOffset At)> _known = new(StringComparer.Ordinal);

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
