using MuxWatch.Diagnosis;
using MuxWatch.Model;
using MuxWatch.Pipeline;

namespace MuxWatch.Sinks;

/// <summary>
/// Groups timeouts into incidents: the timeouts of one endpoint whose waits overlap, or follow within
/// <see cref="Quiet"/> of the latest, are one incident, whatever their number; the incident ends once its endpoint
/// has been quiet that long. Counted by final cause when settled; a revision moves nothing twice.
/// </summary>
/// <remarks>
/// Bounded like the recent list: at most <see cref="MaxIncidents"/> kept (the oldest go, open or not), each with at
/// most <see cref="MaxTimeoutIds"/> ids and <see cref="MaxCulprits"/> culprit lines of at most
/// <see cref="MaxCulpritChars"/>. A flood of timeouts on thousands of endpoints costs that much and no more.
/// </remarks>
public sealed class RecentIncidents : ITimeoutSink
{
    private readonly TimeProvider _time;

    /// <summary>Incidents on <paramref name="time"/>'s clock (their ends are told by it).</summary>
    internal RecentIncidents(TimeProvider time)
    {
        ArgumentNullException.ThrowIfNull(time);
        _time = time;
    }

    /// <summary>How long an endpoint stays quiet before its incident ends; a timeout that started waiting sooner joins it.</summary>
    internal static readonly TimeSpan Quiet = TimeSpan.FromSeconds(30);

    /// <summary>The most incidents kept; the oldest go first.</summary>
    public const int MaxIncidents = 200;

    internal const int MaxTimeoutIds = 100;
    internal const int MaxCulprits = 5;
    internal const int MaxCulpritChars = 400;
    internal const int MaxFleetFailures = 3;
    private const string UnknownEndpoint = "unknown";

    private readonly Lock _gate = new();
    private readonly LinkedList<Entry> _kept = []; // oldest first
    private readonly Dictionary<string, Entry> _latestByEndpoint = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<long, Entry> _byTimeout = [];
    private long _nextId;

    /// <summary>Incidents dropped to keep the bound.</summary>
    public long Dropped { get; private set; }

    /// <inheritdoc />
    void ITimeoutSink.Publish(ObservedTimeout timeout)
    {
        ArgumentNullException.ThrowIfNull(timeout);
        var from = timeout.WaitingSince ?? timeout.Time;
        lock (_gate)
        {
            if (!_latestByEndpoint.TryGetValue(timeout.Endpoint, out var entry) || from > entry.LastTimeout + Quiet)
            {
                entry = new Entry(++_nextId, timeout.Endpoint, from);
                _latestByEndpoint[timeout.Endpoint] = entry;
                entry.Node = _kept.AddLast(entry);
                while (_kept.Count > MaxIncidents)
                {
                    Forget(_kept.First!.Value);
                    Dropped++;
                }
            }

            entry.Start = from < entry.Start ? from : entry.Start;
            entry.LastTimeout = timeout.Time > entry.LastTimeout ? timeout.Time : entry.LastTimeout;
            entry.Timeouts++;
            entry.Settling++;
            if (entry.TimeoutIds.Count < MaxTimeoutIds)
            {
                entry.TimeoutIds.Add(timeout.Id);
            }

            _byTimeout[timeout.Id] = entry;
        }
    }

    /// <inheritdoc />
    void ITimeoutSink.Settled(ObservedTimeout final)
    {
        ArgumentNullException.ThrowIfNull(final);
        lock (_gate)
        {
            if (!_byTimeout.Remove(final.Id, out var entry))
            {
                return; // its incident was dropped to keep the bound
            }

            var cause = final.Diagnosis.Cause;
            entry.Settling--;
            entry.ByCause[cause] = entry.ByCause.GetValueOrDefault(cause) + 1;
            entry.AdviceByCause[cause] = final.Diagnosis.Advice;
            foreach (var line in final.Diagnosis.Evidence.Where(e => e.Cause == cause && NamesCulprit(e.Text)).Select(e => e.Line))
            {
                if (entry.Culprits.Count < MaxCulprits && !entry.Culprits.Contains(line))
                {
                    entry.Culprits.Add(line.Length > MaxCulpritChars ? line[..MaxCulpritChars] + "…" : line);
                }
            }
        }
    }

    /// <summary>The newest incidents first, at most <paramref name="limit"/>; with <paramref name="endpoint"/>, only that endpoint's.</summary>
    public IReadOnlyList<Incident> Newest(int limit = MaxIncidents, string? endpoint = null)
    {
        var now = _time.GetUtcNow();
        lock (_gate)
        {
            return [.. _kept.Reverse()
                .Where(e => endpoint is null || string.Equals(e.Endpoint, endpoint, StringComparison.OrdinalIgnoreCase))
                .Take(Math.Max(0, limit))
                .Select(e => e.Snapshot(now))];
        }
    }

    /// <summary>The incident numbered <paramref name="id"/>; null when never made or dropped.</summary>
    public Incident? Find(long id)
    {
        var now = _time.GetUtcNow();
        lock (_gate)
        {
            return _kept.FirstOrDefault(e => e.Id == id)?.Snapshot(now);
        }
    }

    /// <summary>
    /// The incidents whose fleet reading is due, newest first, at most <paramref name="max"/>: their last timeout at
    /// least <paramref name="delay"/> ago, not yet read for that last timeout or read before the rules' minute after it
    /// was evaluated (a reading so far, read again until complete), and not given up on (three failed reads).
    /// </summary>
    internal IReadOnlyList<FleetDue> DueForFleet(DateTimeOffset now, TimeSpan delay, int max)
    {
        lock (_gate)
        {
            return [.. _kept.Reverse()
                .Where(e => e.Endpoint != UnknownEndpoint && now >= e.LastTimeout + delay
                    && (e.FleetReadFor != e.LastTimeout || e.Fleet is { Complete: false })
                    && e.FleetFailures < MaxFleetFailures && now >= e.FleetRetryAt)
                .Take(Math.Max(0, max))
                .Select(e => new FleetDue(e.Id, e.Endpoint, e.Start, e.LastTimeout))];
        }
    }

    /// <summary>
    /// Keeps what the fleet said of incident <paramref name="id"/> as read for its last timeout <paramref name="readFor"/>;
    /// a reading not yet complete is read again after <paramref name="readAgainAt"/>.
    /// </summary>
    internal void AddFleetReading(long id, DateTimeOffset readFor, FleetReading reading, DateTimeOffset readAgainAt)
    {
        lock (_gate)
        {
            if (_kept.FirstOrDefault(e => e.Id == id) is { } entry)
            {
                (entry.Fleet, entry.FleetReadFor, entry.FleetFailures, entry.FleetRetryAt) = (reading, readFor, 0, readAgainAt);
            }
        }
    }

    /// <summary>A failed read of incident <paramref name="id"/>'s fleet: tried again after <paramref name="retryAt"/>, at most three times.</summary>
    internal void FleetReadFailed(long id, DateTimeOffset retryAt)
    {
        lock (_gate)
        {
            if (_kept.FirstOrDefault(e => e.Id == id) is { } entry)
            {
                (entry.FleetFailures, entry.FleetRetryAt) = (entry.FleetFailures + 1, retryAt);
            }
        }
    }

    /// <summary>The lines that name who or what: the slow command's sender, the huge value.</summary>
    private static bool NamesCulprit(string text) =>
        text.Contains(", sent by ", StringComparison.Ordinal) || text.StartsWith("the huge value is ", StringComparison.Ordinal);

    private void Forget(Entry entry)
    {
        _kept.Remove(entry.Node!);
        if (_latestByEndpoint.TryGetValue(entry.Endpoint, out var latest) && ReferenceEquals(latest, entry))
        {
            _latestByEndpoint.Remove(entry.Endpoint);
        }

        foreach (var id in _byTimeout.Where(pair => ReferenceEquals(pair.Value, entry)).Select(pair => pair.Key).ToList())
        {
            _byTimeout.Remove(id);
        }
    }

    private sealed class Entry(long id, string endpoint, DateTimeOffset start)
    {
        public long Id { get; } = id;

        public string Endpoint { get; } = endpoint;

        public DateTimeOffset Start { get; set; } = start;

        public DateTimeOffset LastTimeout { get; set; } = start;

        public int Timeouts { get; set; }

        public int Settling { get; set; }

        public LinkedListNode<Entry>? Node { get; set; }

        public Dictionary<TimeoutCause, int> ByCause { get; } = [];

        public Dictionary<TimeoutCause, string> AdviceByCause { get; } = [];

        public List<string> Culprits { get; } = [];

        public List<long> TimeoutIds { get; } = [];

        public FleetReading? Fleet { get; set; }

        public DateTimeOffset? FleetReadFor { get; set; }

        public int FleetFailures { get; set; }

        public DateTimeOffset FleetRetryAt { get; set; }

        public Incident Snapshot(DateTimeOffset now)
        {
            TimeoutCause? cause = ByCause.Count == 0 ? null : ByCause.MaxBy(pair => pair.Value).Key;
            return new Incident(Id, Endpoint, Start, LastTimeout, Open: now - LastTimeout <= Quiet)
            {
                Timeouts = Timeouts,
                Settling = Settling,
                ByCause = ByCause.OrderByDescending(pair => pair.Value).ToDictionary(pair => pair.Key.ToName(), pair => pair.Value),
                Cause = cause,
                FirstStep = cause is { } main ? AdviceByCause.GetValueOrDefault(main) : null,
                Culprits = [.. Culprits],
                TimeoutIds = [.. TimeoutIds],
                Fleet = Fleet is null ? null : FleetWeighing.Weigh(Fleet, cause),
            };
        }
    }
}

/// <summary>An incident whose fleet reading is due: which endpoint, over which span.</summary>
internal sealed record FleetDue(long Id, string Endpoint, DateTimeOffset Start, DateTimeOffset LastTimeout);
