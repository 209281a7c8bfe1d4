using System.Globalization;
using MuxWatch.Model;

namespace MuxWatch.Diagnosis;

/// <summary>
/// The witness answered while the request waited (or right around it): the server was answering, so no server cause;
/// the heaviest sign in the app is the cause, a sign held below its weight as a stall's possible consequence weighing
/// in full again.
/// </summary>
internal static partial class WitnessCorrelation
{
    /// <summary>
    /// The diagnosis of a wait through which the server answered MuxWatch's own connection (<paramref name="answers"/>):
    /// a server cause the message suggested gives way to the heaviest sign in the app; a sign in the app stays, said
    /// to be the app's. <paramref name="bracketed"/>: answered just before and just after a dropped connection's wait;
    /// <paramref name="beforeFailure"/>: answered up to a connection failure, which has no wait.
    /// </summary>
    private static TimeoutDiagnosis Answered(TimeoutDiagnosis diagnosis, IReadOnlyList<WitnessAnswer> answers, DateTimeOffset from, bool bracketed = false, DateTimeOffset? beforeFailure = null)
    {
        var first = answers[0];
        var text = beforeFailure is { } failed
            ? string.Create(CultureInfo.InvariantCulture,
                $"not the server: MuxWatch's own connection was answered {(answers.Count == 1 ? "once" : $"{answers.Count} times")} in the {Seconds(failed - from)} before this failure (the last at {Clock(answers[^1].Answered)}, within {answers.Max(a => (a.Answered - a.Sent).TotalMilliseconds):0.#} ms) and silent nowhere, so the server was answering: the connection was dropped on this app's side (its pool, a GC pause, its CPU) or on its path to the server")
            : bracketed
            ? string.Create(CultureInfo.InvariantCulture,
                $"not the server: MuxWatch's own connection was answered at {Clock(first.Answered)}, {Seconds(from - first.Answered)} before this request began to wait, and again to a PING sent at {Clock(answers[^1].Sent)}, after it gave up, each within {Math.Max((first.Answered - first.Sent).TotalMilliseconds, (answers[^1].Answered - answers[^1].Sent).TotalMilliseconds):0.#} ms, silent nowhere in between, so the server was answering: the wait was in this app (its pool, a GC pause, its CPU, a reader behind a large reply) or on its path to the server")
            : string.Create(CultureInfo.InvariantCulture,
                $"not the server: MuxWatch's own connection was answered {(answers.Count == 1 ? "once" : $"{answers.Count} times")} while this request waited (a PING sent {(first.Sent - from).TotalMilliseconds:0} ms into the wait, answered in {(first.Answered - first.Sent).TotalMilliseconds:0.#} ms), so the server was answering: the wait was in this app (its pool, a GC pause, its CPU, a reader behind a large reply) or on its path to the server");
        if (diagnosis.Confidence == DiagnosisConfidence.High && diagnosis.Evidence.Any(e => e.Role == EvidenceRole.Finding && e.Cause == diagnosis.Cause && e.Fields.Contains("server:timeline")))
        {
            // What the server logged explains the wait (a slow command, a huge value copied): the server answered
            // another connection before or after that block, which does not undo it.
            return diagnosis;
        }

        var serverSide = ServerCauses.Contains(diagnosis.Cause) && diagnosis.Confidence != DiagnosisConfidence.High;
        var clientDrop = diagnosis.Cause == TimeoutCause.ConnectionLoss;
        if (diagnosis.Cause is TimeoutCause.SlowCommand or TimeoutCause.Persistence or TimeoutCause.Failover && !serverSide)
        {
            return diagnosis; // the server's own record explains the wait; an answer on another connection does not undo it
        }

        (diagnosis, var raised) = WeighedInFull(diagnosis);
        if (!serverSide && !clientDrop && diagnosis.Cause != TimeoutCause.Unknown
            && Heaviest(diagnosis, raised.Where(c => diagnosis.WeightOf(c) > diagnosis.WeightOf(diagnosis.Cause))) is { } heavier)
        {
            // A sign that arose during the wait, held below its weight as a possible consequence of a stall, outweighs the
            // primary now that the server is seen answering (a starved pool's first timeouts: their waits began before the
            // pool filled, and a 3.x writer starved of threads leaves commands unwritten; a full run called one write-backlog).
            return Promote(diagnosis, heavier, Evidence.Finding(heavier, EvidenceWeight.Strong, text, "witness"),
                $"{heavier.ToName()} outranks {diagnosis.Cause.ToName()}: it arose while this request waited, but the server answered MuxWatch's own connection then, so it is no consequence of a stall; {heavier.ToName()} explains {diagnosis.Cause.ToName()}'s signs as well",
                DiagnosisConfidence.High, excludeServer: true);
        }

        if (!serverSide && !clientDrop && diagnosis.Cause != TimeoutCause.Unknown)
        {
            return diagnosis with
            {
                // The server ruled out: its signs become notes, and the sign in the app no longer has a
                // server stall to be the consequence of.
                Causes = [.. diagnosis.Causes.Where(c => !ServerCauses.Contains(c))],
                Evidence = [.. diagnosis.Evidence.Where(e => e.Role != EvidenceRole.Why).Select(Excluded), Evidence.Finding(diagnosis.Cause, EvidenceWeight.Strong, text, "witness"),
                    .. diagnosis.Evidence.Where(e => e.Role == EvidenceRole.Why && !diagnosis.Causes.Any(c => ServerCauses.Contains(c)))],
                Confidence = diagnosis.WeightOf(diagnosis.Cause) >= EvidenceWeight.Clear ? DiagnosisConfidence.High : DiagnosisConfidence.Medium,
            };
        }

        // A server cause (or a connection the client dropped, or nothing) while the server was answering: the
        // heaviest sign in the app takes its place.
        var candidate = Heaviest(diagnosis, diagnosis.Causes.Where(c => !ServerCauses.Contains(c) && c is not TimeoutCause.Unknown and not TimeoutCause.ConnectionLoss));
        if (candidate is not { } inApp)
        {
            if (clientDrop)
            {
                return diagnosis with { Evidence = [.. diagnosis.Evidence, Evidence.Note(text + "; the app's connection was dropped on the app's side")] };
            }

            var unknown = new TimeoutDiagnosis(TimeoutCause.Unknown, [TimeoutCause.Unknown, .. diagnosis.Causes.Where(c => c != TimeoutCause.Unknown)],
                [Evidence.Note(text), .. diagnosis.Evidence.Where(e => e.Role != EvidenceRole.Why).Select(Excluded)], CauseAdvice.For(TimeoutCause.Unknown))
            {
                Confidence = DiagnosisConfidence.Medium,
                Weights = diagnosis.Weights,
            };
            return unknown;
        }

        var line = Evidence.Finding(inApp, EvidenceWeight.Strong, text, "witness");
        return Promote(diagnosis, inApp, line,
            beforeFailure is null
                ? $"{inApp.ToName()} outranks {diagnosis.Cause.ToName()}: the server answered MuxWatch's own connection while this request waited, so the wait was in the app"
                : $"{inApp.ToName()} outranks {diagnosis.Cause.ToName()}: the server answered MuxWatch's own connection right up to this failure, so the connection was dropped in the app",
            diagnosis.WeightOf(inApp) >= EvidenceWeight.Clear ? DiagnosisConfidence.High : DiagnosisConfidence.Medium,
            excludeServer: true);
    }

    /// <summary>
    /// The diagnosis with every sign that arose during the wait weighed in full (<see cref="Evidence.WeightIfNoStall"/>):
    /// it was held below its weight only because a stall of the server's replies could have caused it, and the server
    /// was answering. Its line says so.
    /// </summary>
    private static (TimeoutDiagnosis Diagnosis, IReadOnlyList<TimeoutCause> Raised) WeighedInFull(TimeoutDiagnosis diagnosis)
    {
        static bool HeldBelow(Evidence e) => e.AroseDuringWait && e.Cause is not null && e.WeightIfNoStall > e.Weight;
        if (!diagnosis.Evidence.Any(HeldBelow))
        {
            return (diagnosis, []);
        }

        var weights = diagnosis.Weights.ToDictionary(entry => entry.Key, entry => entry.Value);
        var raised = new List<TimeoutCause>();
        foreach (var e in diagnosis.Evidence.Where(HeldBelow))
        {
            var (cause, full) = (e.Cause!.Value, e.WeightIfNoStall!.Value);
            if (full > weights.GetValueOrDefault(cause))
            {
                weights[cause] = full;
                raised.Add(cause);
            }
        }

        var evidence = diagnosis.Evidence.Select(e => HeldBelow(e)
            ? e with { Weight = e.WeightIfNoStall!.Value, Text = e.Text + "; but the server answered MuxWatch's own connection meanwhile, so replies had not stopped: weighed in full" }
            : e);
        return (diagnosis with { Evidence = [.. evidence], Weights = weights }, raised);
    }

    /// <summary>The heaviest of <paramref name="causes"/> (the documented order breaks a tie); null when there are none.</summary>
    private static TimeoutCause? Heaviest(TimeoutDiagnosis diagnosis, IEnumerable<TimeoutCause> causes) => causes
        .OrderByDescending(diagnosis.WeightOf)
        .ThenBy(IndexOf)
        .Cast<TimeoutCause?>()
        .FirstOrDefault();
}
