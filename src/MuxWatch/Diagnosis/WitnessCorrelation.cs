using System.Globalization;
using MuxWatch.Model;

namespace MuxWatch.Diagnosis;

/// <summary>
/// What MuxWatch's own connection (the witness: a plain socket on a dedicated thread, beside the app's) saw
/// while a request waited, around its window.
/// </summary>
/// <param name="Silences">The witness's silences near the window, each reaching back to the last answer before it.</param>
/// <param name="Unreachable">When the witness could not reach the server near the window (refused, reset).</param>
/// <param name="Answers">Prompt answers to PINGs sent after the request started waiting and answered before it gave up.</param>
/// <param name="Bracket">
/// The witness's last prompt answer before the wait and its first after it, each within one quiet interval of the wait,
/// when both are known: with no silence between them, the server answered through the wait even when no PING fell
/// inside it (a wait shorter than the witness's interval).
/// </param>
internal sealed record WitnessReport(
    IReadOnlyList<(DateTimeOffset From, DateTimeOffset To)> Silences,
    IReadOnlyList<ServerEvent> Unreachable,
    IReadOnlyList<WitnessAnswer> Answers,
    (WitnessAnswer Before, WitnessAnswer After)? Bracket = null)
{
    /// <summary>True when the witness has something to say about the window.</summary>
    public bool Any => Silences.Count > 0 || Unreachable.Count > 0 || Answers.Count > 0 || Bracket is not null;
}

/// <summary>
/// Reads the second witness against a timeout's diagnosis: the rules of docs/diagnosis.md ("Two witnesses").
/// Pure: the same facts give the same answer.
/// </summary>
/// <remarks>
/// <list type="bullet">
/// <item>The witness could not reach the server (refused, reset) over the wait: the server went away, <c>connection-loss</c>.</item>
/// <item>The witness went unanswered too over a share of the wait: the server, or the path to it, stopped.
/// What the server logged names it (a slow command, a fork: the timeline's correlation, kept); else
/// <c>server-stall</c>, with what stalls a server without a trace. What the app's client did about the
/// silence (gave up on its connection, piled continuations on the pool) is its consequence.</item>
/// <item>The witness was answered promptly while the request waited: the server was answering, so no
/// server cause; the cause is in the app (its pool, a GC pause, its CPU, its reader) or on its path.</item>
/// </list>
/// </remarks>
internal static partial class WitnessCorrelation
{
    /// <summary>The share of the wait the witness must have gone unanswered for to call the server silent over it.</summary>
    public const double SilentShare = TimelineCorrelation.ExplainingShare;

    /// <summary>
    /// How long after a silence a lost connection is still its consequence: 3.x gives up on a connection
    /// after seconds without a reply, and the requests that wait for it to be re-made time out after the
    /// server is back.
    /// </summary>
    public static readonly TimeSpan AfterSilence = TimeSpan.FromSeconds(10);

    private static readonly HashSet<TimeoutCause> ServerCauses =
        [TimeoutCause.ServerStall, TimeoutCause.SlowCommand, TimeoutCause.Persistence, TimeoutCause.Failover];

    /// <summary>
    /// How long after a failure the witness may notice the server gone: it reads its socket every tick and
    /// calls the server gone once a connect is refused, a tick or two after the app's connection broke.
    /// </summary>
    public static readonly TimeSpan NoticedWithin = TimeSpan.FromSeconds(1);

    /// <summary>The refined diagnosis of a request that waited over [<paramref name="from"/>, <paramref name="to"/>].</summary>
    /// <param name="diagnosis">The diagnosis so far.</param>
    /// <param name="witness">What the witness saw around the window.</param>
    /// <param name="from">When the request started waiting.</param>
    /// <param name="to">When it gave up.</param>
    /// <param name="waited">
    /// False for a connection failure, whose window is only the client's default timeout guessed back from
    /// it: an answer inside it does not make the server the cause, but answers throughout it with no silence say the
    /// server was answering up to a failure the client itself made (<paramref name="failureType"/>).
    /// </param>
    /// <param name="connectionSeenUp">When MuxWatch's probe last found the app's connection up (<see cref="LiveCounters.LastSeenConnected"/>), if known.</param>
    /// <param name="failureType">A connection failure's type as the message names it (<c>ConnectionDisposed</c>, <c>SocketClosed</c>), if any.</param>
    public static TimeoutDiagnosis Refine(TimeoutDiagnosis diagnosis, WitnessReport witness, DateTimeOffset from, DateTimeOffset to, bool waited = true, DateTimeOffset? connectionSeenUp = null, string? failureType = null)
    {
        ArgumentNullException.ThrowIfNull(diagnosis);
        ArgumentNullException.ThrowIfNull(witness);
        if (!witness.Any || diagnosis.WeightOf(diagnosis.Cause) == EvidenceWeight.Configuration)
        {
            return diagnosis; // nothing seen, or a refused password: no witness changes a configuration failure
        }

        var waitMs = Math.Max(1, (to - from).TotalMilliseconds);
        if (witness.Unreachable.FirstOrDefault(u => u.Overlaps(from, to + NoticedWithin, to + NoticedWithin)) is { } gone)
        {
            return Gone(diagnosis, gone);
        }

        var silentMs = Covered(witness.Silences, from, to);
        if (silentMs >= SilentShare * waitMs && witness.Answers.Count == 0)
        {
            return Silent(diagnosis, witness.Silences, silentMs, waitMs, from, to);
        }

        // A silence weighs only where it overlaps the wait (the one rule: InTheWait): one that ended
        // before this request began to wait is no evidence of anything in it (a starved pool's timeouts seconds after an
        // unrelated stall were called server-stall). A connection failure gives no wait: its window reaches back
        // AfterSilence, as the client gives up on its connection seconds after a silence began and fails what waits for
        // it to be re-made once the server is back.
        // A silence the app's connection was seen to survive (up at a probe more than NoticedWithin after it ended) did not
        // lose it either: the loss came later, of something else (a starved pool that cannot read its socket).
        var weighedFrom = waited ? from - InTheWait.Slack : from - AfterSilence;
        bool Survived((DateTimeOffset From, DateTimeOffset To) s) => connectionSeenUp > s.To + NoticedWithin && connectionSeenUp < to;
        if (diagnosis.Cause == TimeoutCause.ConnectionLoss && witness.Silences.Any(s => s.To >= weighedFrom && s.From < to && !Survived(s)))
        {
            // The client gave up on its connection during the silence (caught then, or after the server came back):
            // the silence's consequence. A silence that began only after the connection was lost is not its cause.
            var silence = witness.Silences.Where(s => s.From < to).MaxBy(s => s.To);
            return Silent(diagnosis, [silence], silence.To <= to ? 0 : silentMs, waitMs, from, to);
        }

        if (witness.Silences.Where(s => s.To < weighedFrom).Select(s => ((DateTimeOffset From, DateTimeOffset To)?)s).MaxBy(s => s!.Value.To) is { } before)
        {
            // Said as context, never weighed.
            diagnosis = diagnosis with
            {
                Evidence = [.. diagnosis.Evidence, Evidence.Note(string.Create(CultureInfo.InvariantCulture,
                    $"before this request began to wait, MuxWatch's own connection went unanswered from {Clock(before.From)} to {Clock(before.To)}; that ended {Seconds(from - before.To)} before the wait, so it is not weighed"))],
            };
        }
        else if (diagnosis.Cause == TimeoutCause.ConnectionLoss && witness.Silences.Where(s => s.To < to && Survived(s)).Select(s => ((DateTimeOffset From, DateTimeOffset To)?)s).MaxBy(s => s!.Value.To) is { } survived)
        {
            diagnosis = diagnosis with
            {
                Evidence = [.. diagnosis.Evidence, Evidence.Note(string.Create(CultureInfo.InvariantCulture,
                    $"MuxWatch's own connection went unanswered from {Clock(survived.From)} to {Clock(survived.To)}, but the app's connection was seen up at {Clock(connectionSeenUp!.Value)}, after that silence ended: it survived it, so the silence is not weighed"))],
            };
        }

        if (waited && witness.Answers.Count > 0 && silentMs < SilentShare * waitMs)
        {
            return Answered(diagnosis, witness.Answers, from);
        }

        // A connection the app's client dropped, with the witness answered just before the wait and just after it and silent
        // nowhere in between: the server answered throughout, so the drop was on the app's side (3.x drops a connection its
        // starved pool cannot read), and the heaviest sign in the app is the cause, as with an answer inside the wait. The
        // answers are outside the wait, but a server stops long enough to make the client drop its connection only for
        // seconds (3.x gives up after seconds without a reply), which a PING at least every quiet interval (2 s) would
        // have caught as a silence: only for a lost connection does the bracket stand for the wait.
        if (waited && diagnosis.Cause == TimeoutCause.ConnectionLoss && witness.Bracket is var (justBefore, justAfter)
            && !witness.Silences.Any(s => s.To >= justBefore.Answered && s.From <= justAfter.Sent))
        {
            return Answered(diagnosis, [justBefore, justAfter], from, bracketed: true);
        }

        // A connection failure gives no wait. Over the span read for it (the client's default timeout before it was
        // caught), MuxWatch's own connection was answered and silent nowhere: the server was answering right up to the
        // failure, so the connection was dropped on the app's side (3.x drops a connection its starved pool cannot read,
        // seen live: its ConnectionDisposed failures beside a starved pool's timeouts), and the heaviest sign in the app
        // is the cause. A server that stops long enough for the client to give up on its connection leaves a silence.
        // A connection the client itself gave up on (ConnectionDisposed, or a failure that names no type) is said to be
        // the app's even with no sign in it. One the socket reports closed (SocketClosed: 3.x reports it in a starved pool
        // too, seen live with the server answering throughout) is the app's only beside a clear sign in the app: without
        // one it may be the server's or a proxy's doing (CLIENT KILL, an idle timeout), and nothing is said.
        if (!waited && diagnosis.Cause == TimeoutCause.ConnectionLoss && witness.Answers.Count > 0 && !witness.Silences.Any(s => s.To >= from && s.From < to)
            && (failureType is null or "ConnectionDisposed"
                || (failureType == "SocketClosed" && diagnosis.Causes.Any(c => !ServerCauses.Contains(c) && c is not TimeoutCause.ConnectionLoss and not TimeoutCause.Unknown && diagnosis.WeightOf(c) >= EvidenceWeight.Clear))))
        {
            return Answered(diagnosis, witness.Answers, from, beforeFailure: to);
        }

        return diagnosis;
    }

    private static TimeoutDiagnosis Gone(TimeoutDiagnosis diagnosis, ServerEvent gone)
    {
        var span = $"{gone.Outcome ?? "refused"}, from {Clock(gone.Start)}{(gone.End is { } end ? $" to {Clock(end)}" : ", still")}";
        if (diagnosis.Cause == TimeoutCause.ConnectionLoss || !diagnosis.Causes.Contains(TimeoutCause.Failover))
        {
            var line = Evidence.Finding(TimeoutCause.ConnectionLoss, EvidenceWeight.Strong, $"MuxWatch's own connection could not reach the server either ({span}): the server went away", "witness");
            return diagnosis.Cause == TimeoutCause.ConnectionLoss
                ? diagnosis with { Evidence = [line, .. diagnosis.Evidence], Confidence = DiagnosisConfidence.High }
                : Promote(diagnosis, TimeoutCause.ConnectionLoss, line,
                    $"connection-loss outranks {diagnosis.Cause.ToName()}: the server could not be reached from this process at all, so every other sign is its consequence",
                    DiagnosisConfidence.High);
        }

        // The node that failed over is the one that went away: the failover explains it, the witness seconds it.
        var seconded = Evidence.Finding(TimeoutCause.Failover, EvidenceWeight.Strong, $"MuxWatch's own connection could not reach the failed node either ({span})", "witness");
        if (diagnosis.Cause == TimeoutCause.Failover)
        {
            List<Evidence> lines = [.. diagnosis.Evidence];
            lines.Insert(Math.Min(1, lines.Count), seconded);
            return diagnosis with { Evidence = lines };
        }

        // This node's failover over the wait, held as contributing behind a sign in the app (a full run: a GC pause in the
        // seconds before the wait outranked it, and the witness then made the lost connection the cause): the failover is
        // the cause, the lost connection and the app's signs its consequence.
        var restored = diagnosis with
        {
            Evidence = [.. diagnosis.Evidence.Select(e => e.Cause == TimeoutCause.Failover && e.Role == EvidenceRole.Contributing ? e with { Role = EvidenceRole.Finding } : e)],
        };
        return Promote(restored, TimeoutCause.Failover, seconded,
            $"failover outranks {diagnosis.Cause.ToName()}: this node failed over during the wait and MuxWatch's own connection could not reach it either, so the lost connection and the signs in the app are its consequence",
            DiagnosisConfidence.High);
    }

    private static TimeoutDiagnosis Silent(TimeoutDiagnosis diagnosis, IReadOnlyList<(DateTimeOffset From, DateTimeOffset To)> silences, double silentMs, double waitMs, DateTimeOffset from, DateTimeOffset to)
    {
        var silence = silences.Where(s => s.From <= to).MaxBy(s => s.To);
        var covering = silentMs > 0
            ? string.Create(CultureInfo.InvariantCulture, $", {Math.Min(100, 100 * silentMs / waitMs):0}% of this request's wait")
            : $", which ended {Seconds(to - silence.To)} before this request gave up";
        var text = $"MuxWatch's own connection got no answer either: the server did not answer it from {Clock(silence.From)} to {Clock(silence.To)} ({Seconds(silence.To - silence.From)}){covering}: the server, or the path to it, stopped";
        var explained = diagnosis.Confidence == DiagnosisConfidence.High
            && (ServerCauses.Contains(diagnosis.Cause) || diagnosis.Cause == TimeoutCause.LargePayload && diagnosis.Evidence.Any(e => e.Fields.Contains("server:timeline")));
        if (explained || diagnosis.Cause == TimeoutCause.ServerStall)
        {
            // The server's own record names what stopped it, or the message already says the server: one more witness.
            var seconded = Evidence.Finding(diagnosis.Cause, EvidenceWeight.Strong, text, "witness");
            List<Evidence> lines = [.. diagnosis.Evidence];
            lines.Insert(Math.Min(1, lines.Count), seconded);
            if (diagnosis.Cause == TimeoutCause.ServerStall)
            {
                lines.Add(Evidence.Note(UntracedFor(diagnosis)));
            }

            return diagnosis with { Evidence = lines, Confidence = DiagnosisConfidence.High };
        }

        var stall = Evidence.Finding(TimeoutCause.ServerStall, EvidenceWeight.Strong, text, "witness");
        var previous = diagnosis.Cause.ToName();
        var why = ServerCauses.Contains(diagnosis.Cause)
            ? $"server-stall outranks {previous}: the server answered neither the app nor MuxWatch's own connection, and what it logged ({previous}) did not block it for long enough to explain that"
            : $"server-stall outranks {previous}: the server answered neither the app nor MuxWatch's own connection, which waits on a thread of its own; "
                + $"a server that stops makes the client give up on its connection and piles the waiting calls' continuations on the pool, so {previous} here is its consequence";
        var promoted = Promote(diagnosis, TimeoutCause.ServerStall, stall, why, DiagnosisConfidence.High, markConsequence: true);
        return promoted with { Evidence = [.. promoted.Evidence, Evidence.Note(UntracedFor(diagnosis))] };
    }

    /// <summary>The diagnosis with <paramref name="cause"/> first: the new line, then the old evidence (the old primary's a consequence when asked).</summary>
    private static TimeoutDiagnosis Promote(TimeoutDiagnosis diagnosis, TimeoutCause cause, Evidence line, string why, DiagnosisConfidence confidence, bool markConsequence = false, bool excludeServer = false)
    {
        var previous = diagnosis.Cause;
        var kept = diagnosis.Evidence
            .Where(e => e.Role != EvidenceRole.Why)
            .Select(e => markConsequence && e.Role == EvidenceRole.Finding && e.Cause is { } server && ServerCauses.Contains(server) && server != cause ? e with { Role = EvidenceRole.Contributing }
                : markConsequence && e.Role == EvidenceRole.Finding && e.Cause == previous && !e.AroseDuringWait ? e with { Role = EvidenceRole.Consequence }
                : excludeServer && e.Cause is { } c && ServerCauses.Contains(c) ? Excluded(e)
                : e);
        var ownLines = kept.Where(e => e.Cause == cause && e.Role == EvidenceRole.Finding).ToList();
        var causes = new[] { cause }.Concat(diagnosis.Causes.Where(c => c != TimeoutCause.Unknown || previous == TimeoutCause.Unknown)).Distinct()
            .Where(c => c != TimeoutCause.Unknown).ToList();
        var weights = diagnosis.Weights.ToDictionary(entry => entry.Key, entry => entry.Value);
        weights[cause] = EvidenceWeight.Strong > diagnosis.WeightOf(cause) ? EvidenceWeight.Strong : diagnosis.WeightOf(cause);
        return new TimeoutDiagnosis(cause, causes, [line, .. ownLines, .. kept.Except(ownLines), Evidence.Why(why)], CauseAdvice.For(cause))
        {
            Confidence = confidence,
            Weights = weights,
        };
    }

    /// <summary>A server sign the witness's answers rule out, kept as a note of what the message said.</summary>
    private static Evidence Excluded(Evidence evidence) =>
        evidence.Cause is { } cause && ServerCauses.Contains(cause) && evidence.Role == EvidenceRole.Finding
            ? Evidence.Note($"{cause.ToName()} ruled out by the witness: {evidence.Text}")
            : evidence;

    /// <summary>How much of [<paramref name="from"/>, <paramref name="to"/>] the silences cover, in milliseconds (overlaps counted once).</summary>
    private static double Covered(IReadOnlyList<(DateTimeOffset From, DateTimeOffset To)> silences, DateTimeOffset from, DateTimeOffset to)
    {
        var covered = 0.0;
        var reached = from;
        foreach (var (start, end) in silences.OrderBy(s => s.From))
        {
            var s = start > reached ? start : reached;
            var e = end < to ? end : to;
            if (e > s)
            {
                covered += (e - s).TotalMilliseconds;
                reached = e;
            }
        }

        return covered;
    }

    private static int IndexOf(TimeoutCause cause)
    {
        var index = TimeoutDiagnoser.PriorityOrder.ToList().IndexOf(cause);
        return index < 0 ? int.MaxValue : index;
    }

    /// <summary>What stalls a server without a trace in its slow log or its persistence counters.</summary>
    internal const string Untraced =
        "what stalls a server without a trace is outside Redis's own work: the host paused (a VM migrated or snapshotted, a container frozen), swapping, CPU steal, "
        + "appendfsync always on a slow disk (INFO persistence: aof_delayed_fsync), an eviction or expiry storm, a module: look at the server host's metrics at that minute";

    private static string UntracedFor(TimeoutDiagnosis diagnosis) =>
        diagnosis.Evidence.Any(e => e.Fields.Contains("server:timeline"))
            ? "nothing on the server's timeline blocked it for long enough (a save running beside the server blocks nothing; only its fork does); " + Untraced
            : "nothing on the server's timeline explains it (no slow command, fork, save, load or restart logged over the wait); " + Untraced;

    private static string Clock(DateTimeOffset time) => time.UtcDateTime.ToString("HH:mm:ss.f", CultureInfo.InvariantCulture);

    private static string Seconds(TimeSpan span) => span.TotalMilliseconds < 1000
        ? string.Create(CultureInfo.InvariantCulture, $"{span.TotalMilliseconds:0} ms")
        : string.Create(CultureInfo.InvariantCulture, $"{span.TotalSeconds:0.#} s");
}
