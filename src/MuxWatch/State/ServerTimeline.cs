using System.ComponentModel;
using MuxWatch.Model;

namespace MuxWatch.State;

/// <summary>
/// One Redis endpoint as MuxWatch knows it: its events (<see cref="Log"/>), how its polling stands (<see cref="Polling"/>),
/// the witness's answers (the witness part), its cluster's members and the sizes of keys asked about.
/// </summary>
/// <remarks>Thread-safe: the poller and the witness write it, the correlator and the API read it.</remarks>
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): for MuxWatch's own packages, not apps
public sealed partial class ServerTimeline
{
    /// <summary>The most events kept per endpoint, whatever the retention.</summary>
    public const int MaxEvents = ServerEventLog.MaxEvents;

    private IReadOnlySet<string>? _clusterMembers;

    /// <summary>Creates the timeline of <paramref name="endpoint"/>, keeping events for <paramref name="retention"/>.</summary>
    internal ServerTimeline(string endpoint, TimeSpan retention)
    {
        Endpoint = endpoint;
        Log = new ServerEventLog(retention);
    }

    /// <summary>The endpoint, <c>host:port</c>, as the client names it.</summary>
    public string Endpoint { get; }

    /// <summary>The endpoint's events, running and ended.</summary>
    internal ServerEventLog Log { get; }

    /// <summary>How the endpoint's polling stands.</summary>
    internal ServerPollingState Polling { get; } = new();

    /// <summary>
    /// Every event that started before this time is in the timeline: the start of the latest poll that
    /// read everything it may read. A timeout caught before it can be correlated for good.
    /// </summary>
    public DateTimeOffset? CompleteThrough => Polling.CompleteThrough;

    /// <summary>The sizes of keys the diagnosis asked about, as the server answered them (<c>MEMORY USAGE</c>, by the poller).</summary>
    internal KeySizeLedger KeySizes { get; } = new();

    /// <summary>When the newest fork the endpoint's <c>LATENCY HISTORY</c> reported was sampled, if any (the poller asks about newer ones only).</summary>
    public DateTimeOffset? LastForkSample { get; internal set; }

    /// <summary>
    /// True while an interval (a save, a rewrite, a load) is running on the endpoint: its pollers then poll at their busy
    /// cadence, to see it end (as they do when a held timeout waits: <see cref="Pipeline.IServerPollRequests.IsPollWanted"/>).
    /// </summary>
    public bool IntervalRunning => Log.AnyRunning;

    /// <summary>
    /// The cluster's nodes as this node last listed them (<c>CLUSTER NODES</c>, itself and failed nodes
    /// included); null when it is not a cluster node or has not been read.
    /// </summary>
    internal IReadOnlySet<string>? ClusterMembers => Volatile.Read(ref _clusterMembers);

    /// <summary>Notes the cluster's nodes as this node listed them.</summary>
    internal void NoteClusterMembers(IReadOnlyCollection<string> members) =>
        Volatile.Write(ref _clusterMembers, members.ToHashSet(StringComparer.OrdinalIgnoreCase));

    /// <summary>True when an interval of <paramref name="kind"/> is running.</summary>
    public bool IsRunning(ServerEventKind kind) => Log.IsRunning(kind);

    /// <summary>The events that overlap [<paramref name="from"/>, <paramref name="to"/>], by start time.</summary>
    public IReadOnlyList<ServerEvent> Overlapping(DateTimeOffset from, DateTimeOffset to, DateTimeOffset now) => Log.Overlapping(from, to, now);

    /// <summary>Every event kept, by start time, the newest <paramref name="limit"/>.</summary>
    public IReadOnlyList<ServerEvent> Events(int limit = int.MaxValue) => Log.Events(limit);

    /// <summary>
    /// The slow commands of the last hour (of the timeline's retention, if shorter) grouped by command name and
    /// client name, the group with the slowest entry first, at most 20.
    /// </summary>
    public IReadOnlyList<SlowCommandGroup> SlowestCommands(DateTimeOffset now) => Log.SlowestCommands(now);

    /// <summary>The polling state and the witness's, for <c>/api/targets</c>.</summary>
    public ServerPollingStatus Status() => Polling.Status(Log.Count) with
    {
        WitnessAnsweredAt = _answers.Last?.Answered,
        WitnessRoundTripMs = _answers.Last is { } last ? (last.Answered - last.Sent).TotalMilliseconds : null,
        WitnessSilentSince = Log.RunningSince(ServerEventKind.Silence) ?? Log.RunningSince(ServerEventKind.Unreachable),
        WitnessRefused = Volatile.Read(ref _witnessRefused),
        WitnessHeldOffUntil = WitnessHeldOffUntil,
    };
}
