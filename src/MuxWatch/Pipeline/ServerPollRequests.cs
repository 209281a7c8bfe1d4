using System.Collections.Concurrent;
using System.ComponentModel;
using MuxWatch.State;

namespace MuxWatch.Pipeline;

/// <summary>
/// What the timeout pipeline asks of the server pollers, and the one thing they tell it back: the loop between the
/// diagnosis and the polls, in one place. The pipeline asks (a held timeout waits for its endpoint's next poll; a step
/// wants a key's size measured); a poller serves (polls at its busy cadence, measures the key) and says when a poll of
/// the endpoint completed, which settles what waited for it.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): for MuxWatch's own packages, not apps
public interface IServerPollRequests
{
    /// <summary>True when a held timeout waits for <paramref name="endpoint"/>'s next poll: poll it at the busy cadence.</summary>
    bool IsPollWanted(string endpoint);

    /// <summary>The next key whose size a diagnosis wants measured on <paramref name="endpoint"/> (<c>MEMORY USAGE</c>), taken once; null when none.</summary>
    string? TakeKeyToMeasure(string endpoint);

    /// <summary>A poll of <paramref name="endpoint"/> completed and was applied to its timeline: what waited for it settles (on the caller's thread).</summary>
    void Polled(string endpoint);
}

/// <summary>
/// The pipeline's requests by endpoint: a flag (a held timeout waits) and the keys to measure, both bounded whatever the
/// timeouts name. An endpoint nothing is asked of holds no entry, nor one that nobody polls (no timeline: a posted
/// message's server): a held timeout for it settles at its deadline.
/// </summary>
internal sealed class ServerPollRequests(ServerTimelines timelines) : IServerPollRequests
{
    /// <summary>The longest key ever asked about: a key longer than this is named, never measured.</summary>
    internal const int MaxKeyLength = 1024;

    /// <summary>Keys waiting to be measured per endpoint, at most; more are not asked about.</summary>
    internal const int MaxKeysWanted = 8;

    private readonly ConcurrentDictionary<string, Asked> _byEndpoint = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>Raised after a poll of an endpoint completed (on the poller's thread): the pipeline settles what waited for it.</summary>
    internal event Action<string>? Answered;

    /// <summary>Asks for <paramref name="endpoint"/>'s next poll soon, and for <paramref name="key"/>'s size at it when one is given.</summary>
    internal void Ask(string endpoint, string? key)
    {
        if (timelines.Find(endpoint) is null)
        {
            return;
        }

        while (true)
        {
            var asked = _byEndpoint.GetOrAdd(endpoint, static _ => new Asked());
            lock (asked)
            {
                if (!_byEndpoint.TryGetValue(endpoint, out var current) || !ReferenceEquals(current, asked))
                {
                    continue; // a poll answered and dropped this entry meanwhile: ask on the one that stands
                }

                asked.PollWanted = true;
                if (key is { Length: > 0 and <= MaxKeyLength } && !asked.Keys.Contains(key) && asked.Keys.Count < MaxKeysWanted)
                {
                    asked.Keys.Add(key);
                }

                return;
            }
        }
    }

    public bool IsPollWanted(string endpoint) => _byEndpoint.TryGetValue(endpoint, out var asked) && Volatile.Read(ref asked.PollWanted);

    public string? TakeKeyToMeasure(string endpoint)
    {
        if (!_byEndpoint.TryGetValue(endpoint, out var asked))
        {
            return null;
        }

        lock (asked)
        {
            if (asked.Keys.Count == 0)
            {
                return null;
            }

            var key = asked.Keys[0];
            asked.Keys.RemoveAt(0);
            return key;
        }
    }

    public void Polled(string endpoint)
    {
        if (_byEndpoint.TryGetValue(endpoint, out var asked))
        {
            lock (asked)
            {
                asked.PollWanted = false; // whoever still waits asks again when told of this poll
                if (asked.Keys.Count == 0)
                {
                    _byEndpoint.TryRemove(new KeyValuePair<string, Asked>(endpoint, asked));
                }
            }
        }

        Answered?.Invoke(endpoint);
    }

    private sealed class Asked
    {
        public bool PollWanted;

        public List<string> Keys { get; } = [];
    }
}
