using System.Globalization;
using MuxWatch.Model;

namespace MuxWatch.Diagnosis;

/// <summary>
/// Refines a timeout's diagnosis with what its server did while the request waited: the rules of
/// docs/diagnosis.md ("Server correlation"). Pure: the same events give the same answer.
/// </summary>
internal static class TimelineCorrelation
{
    /// <summary>
    /// The share of the waiting window a server event must have blocked the server for to explain the
    /// timeout on its own: a 2 s command explains a 500 ms wait, a 3 ms fork does not.
    /// </summary>
    public const double ExplainingShare = 0.25;

    private const int MaxSlowCommandLines = 3;

    /// <summary>A role change's outcome when a replica was promoted (ServerStateTracker writes it).</summary>
    internal const string PromotedOutcome = "promoted to primary";

    /// <summary>
    /// Commands that touch one value and do O(1) work on it: in the slow log, their time went into copying
    /// a huge value (a 400 MB GET takes Redis over a second to reply), so they are a payload problem, not a
    /// command to replace.
    /// </summary>
    internal static readonly HashSet<string> SingleValueCommands = new(StringComparer.OrdinalIgnoreCase)
    {
        "GET", "SET", "SETEX", "PSETEX", "SETNX", "GETSET", "GETDEL", "GETEX", "APPEND", "HGET", "HSETNX", "LINDEX", "LSET", "DUMP", "RESTORE",
    };

    /// <summary>
    /// The diagnosis of a timeout whose request waited over [<paramref name="from"/>, <paramref name="to"/>]
    /// given the server <paramref name="events"/> that overlap that window.
    /// </summary>
    /// <remarks>
    /// Each event is weighed by how long it could have blocked the server within the window: a fork's or a
    /// slow command's own duration, a load's or a restart's overlap; a BGSAVE or AOF rewrite merely running
    /// blocks nothing (its child works beside the server). The event that blocked longest explains the
    /// timeout when it covers at least <see cref="ExplainingShare"/> of the wait: it then names the cause
    /// with high confidence, over <c>server-stall</c> and <c>unknown</c>, and over whatever a blocked server
    /// brings about on the client (a connection the client gave up on, continuations piled up on the pool,
    /// a backlog, each held by the message rules below strong), which is listed as its consequence. A cause
    /// with strong evidence of its own (starvation already there before the wait, a large payload, a
    /// saturated CPU) keeps priority, the server's events listed as contributing, but a short GC pause or a busy CPU
    /// yields to an event that blocked the server over the whole wait (<see cref="BlockedThroughTheProcess"/>). With no event that
    /// explains the wait, a save in progress makes <c>persistence</c> (medium), else the longest partial
    /// block its cause (low), and only in place of <c>server-stall</c> or <c>unknown</c>.
    /// <para>
    /// A connection failure of <paramref name="failedConnectionOf"/> (a watched multiplexer's connection that failed, not a
    /// request that waited): a huge value that same multiplexer asked this server for (a single-value command in the slow
    /// log, sent by it) held that connection from when the server began to copy it while its reply was read (up to
    /// <see cref="ReadPerCopy"/> times the copy, within the window), since a reply is read before anything behind it. Seen live on 3.4.35: a 200 MB GET logged after 1 s of copying, then about 3 s of
    /// reading it, and the client dropped the connection (ConnectionDisposed) with MuxWatch's PING behind it; counted for
    /// its copy alone (a fifth of the 5 s taken for a connection failure) it was only contributing, and the failure was
    /// named connection-loss, high.
    /// </para>
    /// </remarks>
    public static TimeoutDiagnosis Refine(TimeoutDiagnosis diagnosis, IReadOnlyList<ServerEvent> events, DateTimeOffset from, DateTimeOffset to, string? failedConnectionOf = null)
    {
        ArgumentNullException.ThrowIfNull(diagnosis);
        ArgumentNullException.ThrowIfNull(events);
        var found = Findings(events, from, to, failedConnectionOf);
        if (found.Count == 0)
        {
            return diagnosis;
        }

        var waitMs = Math.Max(1, (to - from).TotalMilliseconds);
        var longest = found.MaxBy(f => f.BlockedMs)!;
        var explaining = longest.BlockedMs > 0 && longest.BlockedMs >= ExplainingShare * waitMs ? longest : null;
        var primaryWeight = diagnosis.WeightOf(diagnosis.Cause);
        var unexplained = diagnosis.Cause is TimeoutCause.ServerStall or TimeoutCause.Unknown;

        if (explaining is not null && (unexplained || IsConsequence(diagnosis.Cause, primaryWeight)))
        {
            return Explained(diagnosis, found, explaining, waitMs, unexplained);
        }

        if (explaining is not null && explaining.BlockedMs >= waitMs && diagnosis.Cause is TimeoutCause.GcPause or TimeoutCause.ClientCpu && primaryWeight < EvidenceWeight.Overriding)
        {
            return BlockedThroughTheProcess(diagnosis, found, explaining, waitMs);
        }

        if (unexplained)
        {
            // Nothing blocked the server for long enough: a save merely running is the likeliest server-side
            // reading (its fork, copy-on-write and disk), else the longest partial block, held weakly.
            var running = found.FirstOrDefault(f => f.Running);
            var primary = running ?? longest;
            var why = running is not null
                ? "persistence: nothing blocked the server for a quarter of the wait, and a save ran over it (its fork, copy-on-write and disk are the likeliest server-side cause)"
                : $"{primary.Cause.ToName()} is the only server-side reading, and a partial one: {Clock.Blocked(primary, waitMs)}";
            return Build(diagnosis, found, primary, why, running is not null ? DiagnosisConfidence.Medium : DiagnosisConfidence.Low, dropPrevious: true, consequence: null);
        }

        // A client-side cause with evidence of its own keeps priority; the server's are contributing.
        return diagnosis with
        {
            Causes = [.. diagnosis.Causes.Concat(found.Select(f => f.Cause)).Distinct()],
            Evidence = [.. diagnosis.Evidence, .. Ordered(found).Select(f => f.Evidence with { Role = EvidenceRole.Contributing })],
            Weights = WithServer(diagnosis.Weights, found, strongest: null),
        };
    }

    /// <summary>
    /// True when a cause, held this weakly, is what a server blocked over the wait brings about on the
    /// client: a connection the client gave up on (3.x drops one after seconds without a reply) unless a
    /// password or name was refused, and any sign held below strong (load that arose during the wait, a
    /// backlog behind the unanswered commands, a few bytes unread).
    /// </summary>
    private static bool IsConsequence(TimeoutCause cause, EvidenceWeight weight) => cause switch
    {
        TimeoutCause.ConnectionLoss => weight < EvidenceWeight.Configuration,
        _ => weight < EvidenceWeight.Strong,
    };

    private static TimeoutDiagnosis Explained(TimeoutDiagnosis diagnosis, List<Finding> found, Finding explaining, double waitMs, bool unexplained)
    {
        var blocked = Clock.Blocked(explaining, waitMs);
        if (explaining.Cause == diagnosis.Cause || unexplained)
        {
            // The server's own record of what ran in the window (or, for a restart seen as a lost connection, confirms it).
            return Build(diagnosis, found, explaining, $"{explaining.Cause.ToName()}: {blocked}", DiagnosisConfidence.High, dropPrevious: unexplained, consequence: null);
        }

        var consequence = diagnosis.Cause.ToName();
        var why = $"{explaining.Cause.ToName()} outranks {consequence}: {blocked}; a server blocked that long makes the client give up on its connection "
            + $"and piles the waiting calls' continuations on the pool, so {consequence} here is its consequence (the message alone held it below strong)";
        return Build(diagnosis, found, explaining, why, DiagnosisConfidence.High, dropPrevious: false, diagnosis.Cause);
    }

    /// <summary>
    /// The server was blocked over the whole wait while this process paused for part of it (a pause under half the
    /// wait, held strong) or was short of CPU: no reply could have come whatever the process did, so the server's block
    /// is the cause and the process's state contributes. Seen on a loaded machine: a 310 ms collection inside the 800 ms
    /// a sidecar's PING waited behind a 5 s DEBUG SLEEP had named gc-pause, and the witness's silence then server-stall;
    /// in CI, the same PING behind the same sleep with the sidecar's process at 95% of its cores had named client-cpu,
    /// and the witness's silence then server-stall, with the sleep that blocked the whole wait only contributing.
    /// </summary>
    private static TimeoutDiagnosis BlockedThroughTheProcess(TimeoutDiagnosis diagnosis, List<Finding> found, Finding explaining, double waitMs)
    {
        var inProcess = diagnosis.Cause;
        var what = inProcess == TimeoutCause.GcPause
            ? "the collections paused it for less than half of the wait"
            : "its CPU was busy, which delays a reply but cannot make one the server never sent";
        var why = $"{explaining.Cause.ToName()} outranks {inProcess.ToName()}: {Clock.Blocked(explaining, waitMs)}, so no reply could have come over the wait "
            + $"whatever this process did; {what} (contributing)";
        var built = Build(diagnosis, found, explaining, why, DiagnosisConfidence.High, dropPrevious: false, consequence: null);
        return built with
        {
            Evidence = [.. built.Evidence.Select(e => e.Role == EvidenceRole.Finding && e.Cause == inProcess ? e with { Role = EvidenceRole.Contributing } : e)],
        };
    }

    /// <summary>
    /// The refined diagnosis with <paramref name="primary"/>'s cause first: its line, the other server lines
    /// (contributing), then the message's evidence (the previous primary's lines marked as a consequence).
    /// </summary>
    private static TimeoutDiagnosis Build(TimeoutDiagnosis diagnosis, List<Finding> found, Finding primary, string why, DiagnosisConfidence confidence, bool dropPrevious, TimeoutCause? consequence)
    {
        var previous = diagnosis.Causes.Where(c => !(dropPrevious && c is TimeoutCause.ServerStall or TimeoutCause.Unknown));
        var causes = new[] { primary.Cause }.Concat(Ordered(found).Select(f => f.Cause)).Concat(previous).Distinct().ToList();
        var serverLines = Ordered(found).Where(f => !ReferenceEquals(f, primary))
            .Select(f => f.Cause == primary.Cause ? f.Evidence : f.Evidence with { Role = EvidenceRole.Contributing });
        var messageLines = diagnosis.Evidence
            .Where(evidence => evidence.Role != EvidenceRole.Why)
            .Select(evidence => evidence.Role == EvidenceRole.Finding && evidence.Cause == consequence && !evidence.AroseDuringWait
                ? evidence with { Role = EvidenceRole.Consequence }
                : evidence);
        List<Evidence> evidence = [primary.Evidence with { Weight = confidence == DiagnosisConfidence.High ? EvidenceWeight.Strong : EvidenceWeight.Weak }, .. serverLines, .. messageLines, Evidence.Why(why)];

        return new TimeoutDiagnosis(causes[0], causes, evidence, CauseAdvice.For(causes[0]))
        {
            Confidence = confidence,
            Weights = WithServer(diagnosis.Weights, found, strongest: confidence == DiagnosisConfidence.High ? primary : null),
        };
    }

    private static IReadOnlyDictionary<TimeoutCause, EvidenceWeight> WithServer(IReadOnlyDictionary<TimeoutCause, EvidenceWeight> weights, List<Finding> found, Finding? strongest)
    {
        var merged = weights.ToDictionary(entry => entry.Key, entry => entry.Value);
        foreach (var finding in found)
        {
            var weight = ReferenceEquals(finding, strongest) ? EvidenceWeight.Strong : EvidenceWeight.Weak;
            merged[finding.Cause] = merged.TryGetValue(finding.Cause, out var before) && before > weight ? before : weight;
        }

        return merged;
    }

    /// <summary>The server lines in the order they are shown: longest block first, then what was merely running.</summary>
    private static IEnumerable<Finding> Ordered(List<Finding> found) =>
        found.OrderByDescending(f => f.BlockedMs).ThenByDescending(f => f.Running).ThenBy(f => f.Order);

    /// <summary>What each event could have blocked of the window, and how it reads.</summary>
    private static List<Finding> Findings(IReadOnlyList<ServerEvent> events, DateTimeOffset from, DateTimeOffset to, string? failedConnectionOf)
    {
        var found = new List<Finding>();
        var order = 0;
        var intervals = events.Where(e => e.Kind is ServerEventKind.Bgsave or ServerEventKind.AofRewrite or ServerEventKind.ModuleFork).ToList();
        var forks = events.Where(e => e.Kind == ServerEventKind.Fork).ToList();
        foreach (var interval in intervals)
        {
            // The save's child runs beside the server; only its fork blocks it, and only while it lasts.
            var fork = forks.FirstOrDefault(f => f.Overlaps(interval.Start, interval.End ?? to, to) && f.Overlaps(from, to, to));
            var line = $"{IntervalText(interval)}{(fork is null ? string.Empty : $" ({ForkText(fork)})")}";
            found.Add(new Finding(TimeoutCause.Persistence, fork is null ? 0 : Blocked(fork, from, to), Running: true, line, order++));
        }

        foreach (var fork in forks.Where(f => !intervals.Any(i => f.Overlaps(i.Start, i.End ?? to, to))))
        {
            found.Add(new Finding(TimeoutCause.Persistence, Blocked(fork, from, to), Running: false, ForkText(fork), order++));
        }

        foreach (var load in events.Where(e => e.Kind == ServerEventKind.Loading))
        {
            // Loading refuses every command until it ends: the whole overlap blocks.
            found.Add(new Finding(TimeoutCause.Persistence, Overlap(load, from, to), Running: false, IntervalText(load), order++));
        }

        var slow = events.Where(e => e.Kind == ServerEventKind.SlowCommand)
            .Select(e => (Event: e, Blocked: HeldTheFailedConnection(e, failedConnectionOf) ? HeldWhileRead(e, from, to) : Blocked(e, from, to)))
            .OrderByDescending(s => s.Blocked)
            .ToList();
        foreach (var (command, blocked) in slow.Take(MaxSlowCommandLines))
        {
            var name = (command.Command, command.Argument) switch
            {
                (null, _) => "a command",
                ({ } commandName, { } argument) => $"{commandName} {argument}",
                ({ } commandName, null) => commandName,
            };
            var logged = $"{name} ran {Ms(command.DurationMs)}, logged {Clock.Of(command.End ?? to)} (slow log #{command.SlowlogId}){SenderText(command)}";
            var held = HeldTheFailedConnection(command, failedConnectionOf)
                ? "; sent on the connection that failed, which its reply held while it was read (a reply is read before anything behind it)"
                : string.Empty;
            found.Add(command.Command is { } known && SingleValueCommands.Contains(known)
                ? new Finding(TimeoutCause.LargePayload, blocked, Running: false,
                    $"{logged}: {known} does O(1) work on one value, so its time went into a huge value{held}", order++)
                : new Finding(TimeoutCause.SlowCommand, blocked, Running: false, logged, order++));
        }

        if (slow.Count > MaxSlowCommandLines)
        {
            found.Add(new Finding(TimeoutCause.SlowCommand, 0, Running: false, $"and {slow.Count - MaxSlowCommandLines} more slow commands in the window", order++));
        }

        foreach (var change in events.Where(e => e.Kind == ServerEventKind.RoleChange && e.Outcome == PromotedOutcome))
        {
            // From the primary's loss to its replica's promotion nothing could answer as the primary: a request
            // that failed inside that window failed because of it, whatever its wait (a connection failure's
            // is only guessed), so the whole wait counts.
            var replaced = change.Peer is { } peer ? $" in place of {peer}" : string.Empty;
            var failedDuring = change.Start <= to && to <= (change.End ?? to);
            found.Add(new Finding(TimeoutCause.Failover, failedDuring ? (to - from).TotalMilliseconds : Overlap(change, from, to), Running: false,
                $"a failover: a replica was promoted to primary{replaced} between {Clock.Of(change.Start)} and {Clock.Of(change.End ?? to)}", order++));
        }

        foreach (var down in events.Where(e => e.Kind == ServerEventKind.ClusterFail))
        {
            // The node refused every command (CLUSTERDOWN) while it saw the cluster down: a failover under way.
            found.Add(new Finding(TimeoutCause.Failover, Overlap(down, from, to), Running: false,
                $"the cluster was down (cluster_state:fail) from {Clock.Of(down.Start)}{(down.End is { } end ? $" to {Clock.Of(end)}" : ", still")}", order++));
        }

        foreach (var restart in events.Where(e => e.Kind == ServerEventKind.Restart))
        {
            found.Add(new Finding(TimeoutCause.ConnectionLoss, Overlap(restart, from, to), Running: false,
                $"the server restarted between {Clock.Of(restart.Start)} and {Clock.Of(restart.End ?? to)}", order++));
        }

        return found;
    }

    /// <summary>
    /// Who sent a slow command, as the slow log recorded it (Redis 4.0 and later): ", sent by 10.0.0.7:52110
    /// (nightly-export)", with the connection MuxWatch knows it as when it knows it; empty when the server
    /// recorded no client.
    /// </summary>
    private static string SenderText(ServerEvent command)
    {
        if (command.ClientAddress is null && command.ClientName is null)
        {
            return string.Empty;
        }

        var name = command.ClientName ?? "no client name";
        var known = command.SentBy is { } sentBy ? $": {sentBy}" : string.Empty;
        return $", sent by {command.ClientAddress ?? "an unknown address"} ({name}{known})";
    }

    /// <summary>
    /// How many times its copy on the server a huge reply may take to be read by the client: measured here, a 200 MB GET
    /// copied in 1,041 ms was read in about 3 s. Bounds how long a value is said to have held its connection, so a command
    /// the slow log kept for 12 ms is never said to have held it for seconds.
    /// </summary>
    internal const double ReadPerCopy = 5;

    /// <summary>
    /// How much of the window a huge value held the connection it was sent on: from the server's copy's start until it
    /// could have been read (<see cref="ReadPerCopy"/> times the copy), within the window.
    /// </summary>
    private static double HeldWhileRead(ServerEvent command, DateTimeOffset from, DateTimeOffset to) =>
        Overlap(command.Start, command.Start + TimeSpan.FromMilliseconds((1 + ReadPerCopy) * (command.DurationMs ?? 0)), from, to);

    /// <summary>True when <paramref name="command"/> is a huge value's command sent by <paramref name="failedConnectionOf"/>, whose connection failed.</summary>
    private static bool HeldTheFailedConnection(ServerEvent command, string? failedConnectionOf) =>
        failedConnectionOf is not null && command.SentByMultiplexer == failedConnectionOf
        && command.Command is { } name && SingleValueCommands.Contains(name);

    /// <summary>
    /// How long an event with a duration of its own (a fork, a slow command) could have blocked the server
    /// within the window: its duration, but no more than its (widened) interval overlaps the window.
    /// </summary>
    private static double Blocked(ServerEvent e, DateTimeOffset from, DateTimeOffset to) =>
        Math.Min(e.DurationMs ?? 0, Overlap(e, from, to));

    private static double Overlap(ServerEvent e, DateTimeOffset from, DateTimeOffset to) => Overlap(e.Start, e.End ?? to, from, to);

    /// <summary>How much of [<paramref name="from"/>, <paramref name="to"/>] the span from <paramref name="start"/> to <paramref name="end"/> covers, in milliseconds.</summary>
    private static double Overlap(DateTimeOffset start, DateTimeOffset end, DateTimeOffset from, DateTimeOffset to)
    {
        var first = start > from ? start : from;
        var last = end < to ? end : to;
        return Math.Max(0, (last - first).TotalMilliseconds);
    }

    private static string IntervalText(ServerEvent interval)
    {
        var name = interval.Kind switch
        {
            ServerEventKind.Bgsave => "BGSAVE",
            ServerEventKind.AofRewrite => "AOF rewrite",
            ServerEventKind.ModuleFork => "module fork",
            _ => "dataset load",
        };
        if (interval.BetweenPolls)
        {
            return $"a {name} started and ended between polls at {Clock.Of(interval.Start)} and {Clock.Of(interval.End ?? interval.Start)}";
        }

        return interval.End is { } end
            ? $"{name} ran from {Clock.Of(interval.Start)} to {Clock.Of(end)}"
            : $"{name} in progress since {Clock.Of(interval.Start)}";
    }

    private static string ForkText(ServerEvent fork) => fork.BetweenPolls
        ? $"fork {Ms(fork.DurationMs)} between {Clock.Of(fork.Start)} and {Clock.Of(fork.End ?? fork.Start)}"
        : $"fork {Ms(fork.DurationMs)} at {Clock.Of(fork.Start)}";

    private static string Ms(double? milliseconds) =>
        milliseconds is { } ms ? string.Create(CultureInfo.InvariantCulture, $"{ms:0.#} ms") : "? ms";

    /// <summary>One server event's weight against the wait.</summary>
    /// <param name="Cause">The cause it points at.</param>
    /// <param name="BlockedMs">How long it could have blocked the server within the window (0 for what runs beside it).</param>
    /// <param name="Running">A save or rewrite that ran over the window (its child, beside the server).</param>
    /// <param name="Text">What it says, without the cause's name.</param>
    /// <param name="Order">Its place among events of equal weight.</param>
    private sealed record Finding(TimeoutCause Cause, double BlockedMs, bool Running, string Text, int Order)
    {
        /// <summary>As evidence: a finding of the server's timeline, weak unless it explains the wait (see <see cref="Build"/>).</summary>
        public Evidence Evidence => Evidence.Finding(Cause, EvidenceWeight.Weak, Text, "server:timeline");
    }

    private static class Clock
    {
        /// <summary>A time of day, UTC, to the tenth of a second: evidence lines are read next to logs.</summary>
        public static string Of(DateTimeOffset time) => time.UtcDateTime.ToString("HH:mm:ss.f", CultureInfo.InvariantCulture);

        /// <summary>"the server was blocked up to 930 ms of the 930 ms wait (100%)".</summary>
        public static string Blocked(Finding finding, double waitMs) => string.Create(CultureInfo.InvariantCulture,
            $"the server could have been blocked {finding.BlockedMs:0.#} ms of the {waitMs:0.#} ms wait ({Math.Min(100, 100 * finding.BlockedMs / waitMs):0}%)");
    }
}
