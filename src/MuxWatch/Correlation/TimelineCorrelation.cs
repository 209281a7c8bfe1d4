using System.Globalization;
using MuxWatch.Server;
using MuxWatch.Timeouts;

namespace MuxWatch.Correlation;

/// <summary>
/// Refines a timeout's diagnosis with what its server did while the request waited: the rules of
/// docs/diagnosis.md ("Server correlation"). Pure: the same events give the same answer.
/// </summary>
public static class TimelineCorrelation
{
    private const int MaxSlowCommandLines = 3;

    /// <summary>
    /// The diagnosis of a timeout whose request waited over [<paramref name="from"/>, <paramref name="to"/>]
    /// given the server <paramref name="events"/> that overlap that window.
    /// </summary>
    /// <remarks>
    /// A fork inside the window makes <c>persistence</c>; else a slow command makes <c>slow-command</c>;
    /// else a save, rewrite or load in progress makes <c>persistence</c>; a restart makes
    /// <c>connection-loss</c>. They refine <c>server-stall</c> and <c>unknown</c>; any other primary cause
    /// (thread-pool starvation, ...) keeps priority, with the server's causes listed as contributing.
    /// </remarks>
    public static TimeoutDiagnosis Refine(TimeoutDiagnosis diagnosis, IReadOnlyList<ServerEvent> events, DateTimeOffset from, DateTimeOffset to)
    {
        ArgumentNullException.ThrowIfNull(diagnosis);
        ArgumentNullException.ThrowIfNull(events);
        var found = new List<(TimeoutCause Cause, int Rank, string Line)>();
        var intervals = events.Where(e => e.Kind is ServerEventKind.Bgsave or ServerEventKind.AofRewrite or ServerEventKind.ModuleFork or ServerEventKind.Loading).ToList();
        var forks = events.Where(e => e.Kind == ServerEventKind.Fork).ToList();
        foreach (var interval in intervals)
        {
            var fork = forks.FirstOrDefault(f => f.Overlaps(interval.Start, interval.End ?? to, to));
            var forkText = fork is null ? string.Empty : $" ({ForkText(fork)})";
            var forkInWindow = fork is not null && fork.Overlaps(from, to, to);
            found.Add((TimeoutCause.Persistence, forkInWindow ? 0 : 2, $"persistence: {IntervalText(interval)}{forkText}"));
        }

        foreach (var fork in forks.Where(f => !intervals.Any(i => f.Overlaps(i.Start, i.End ?? to, to))))
        {
            found.Add((TimeoutCause.Persistence, 0, $"persistence: {ForkText(fork)}"));
        }

        var slow = events.Where(e => e.Kind == ServerEventKind.SlowCommand).OrderByDescending(e => e.DurationMs).ToList();
        foreach (var command in slow.Take(MaxSlowCommandLines))
        {
            found.Add((TimeoutCause.SlowCommand, 1,
                $"slow-command: {command.Command ?? "a command"} ran {Ms(command.DurationMs)}, logged {Clock(command.End ?? to)} (slow log #{command.SlowlogId})"));
        }

        if (slow.Count > MaxSlowCommandLines)
        {
            found.Add((TimeoutCause.SlowCommand, 1, $"slow-command: and {slow.Count - MaxSlowCommandLines} more slow commands in the window"));
        }

        foreach (var restart in events.Where(e => e.Kind == ServerEventKind.Restart))
        {
            found.Add((TimeoutCause.ConnectionLoss, 3, $"connection-loss: the server restarted between {Clock(restart.Start)} and {Clock(restart.End ?? to)}"));
        }

        if (found.Count == 0)
        {
            return diagnosis;
        }

        var ordered = found.OrderBy(f => f.Rank).ToList();
        var serverCauses = ordered.Select(f => f.Cause).Distinct().ToList();
        var lines = ordered.Select(f => f.Line).ToList();
        if (diagnosis.Cause is TimeoutCause.ServerStall or TimeoutCause.Unknown)
        {
            var causes = serverCauses.Concat(diagnosis.Causes.Where(c => c is not (TimeoutCause.ServerStall or TimeoutCause.Unknown))).Distinct().ToList();
            // The server's own record of what ran in the window: a fork or a slow command inside it holds
            // firmly; a save merely in progress, or a restart, less so.
            return new TimeoutDiagnosis(causes[0], causes, [.. lines, .. diagnosis.Evidence], TimeoutDiagnoser.AdviceFor(causes[0]))
            {
                Confidence = ordered[0].Rank <= 1 ? DiagnosisConfidence.High : DiagnosisConfidence.Medium,
            };
        }

        // A client-side cause with its own evidence keeps priority; the server's are contributing.
        return diagnosis with
        {
            Causes = [.. diagnosis.Causes.Concat(serverCauses).Distinct()],
            Evidence = [.. diagnosis.Evidence, .. lines.Select(line => line + " (contributing)")],
        };
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
            return $"a {name} started and ended between polls at {Clock(interval.Start)} and {Clock(interval.End ?? interval.Start)}";
        }

        return interval.End is { } end
            ? $"{name} ran from {Clock(interval.Start)} to {Clock(end)}"
            : $"{name} in progress since {Clock(interval.Start)}";
    }

    private static string ForkText(ServerEvent fork) => fork.BetweenPolls
        ? $"fork {Ms(fork.DurationMs)} between {Clock(fork.Start)} and {Clock(fork.End ?? fork.Start)}"
        : $"fork {Ms(fork.DurationMs)} at {Clock(fork.Start)}";

    private static string Ms(double? milliseconds) =>
        milliseconds is { } ms ? string.Create(CultureInfo.InvariantCulture, $"{ms:0.#} ms") : "? ms";

    /// <summary>A time of day, UTC, to the tenth of a second: evidence lines are read next to logs.</summary>
    private static string Clock(DateTimeOffset time) => time.UtcDateTime.ToString("HH:mm:ss.f", CultureInfo.InvariantCulture);
}
