using System.Globalization;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Diagnosis;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Pipeline;

/// <summary>
/// Names the huge value behind a <c>large-payload</c> timeout, and its size: the key whose reply was huge, which is
/// not necessarily the timed-out command's own (a small GET queued behind the huge reply names its own key). Every
/// timeout of the wait reads the same witnesses, so every one names the same key.
/// </summary>
/// <remarks>
/// The key comes from what recorded the huge reply: the slow log's entry for a single-value command in the wait
/// (Redis logs a GET of a huge value: copying it took the time), else the message's <c>active</c> field (3.x: the
/// command the connection was reading) or its <c>next</c> field (the command at the head of the queue, which every
/// request behind it waited for). Nothing is guessed where none names one; <c>explain</c> reads the message only. Its size is asked of
/// the server once (<see cref="KeySizeLedger"/>, <c>MEMORY USAGE</c> by the poller) unless
/// <see cref="MuxWatchOptions.KeySizes"/> is off; the timeout is held open for the answer like for a poll.
/// </remarks>
internal sealed class HugeKeyStep(ServerTimelines? timelines, TimeProvider time, IOptions<MuxWatchOptions> options) : ITimeoutStep
{
    /// <summary>The step <c>explain</c> runs: no server to ask, the key from the message's own text.</summary>
    public static HugeKeyStep MessageOnly { get; } = new(null, TimeProvider.System, Options.Create(new MuxWatchOptions()));

    public TimeoutStepStage Stage => TimeoutStepStage.Correlate;

    public void Apply(TimeoutContext timeout)
    {
        if (timeout.Diagnosis is not { Cause: TimeoutCause.LargePayload } diagnosis)
        {
            return;
        }

        var endpoint = timeout.Report.Endpoint ?? timeout.LiveCounters?.Endpoint;
        var timeline = endpoint is null ? null : timelines?.Find(endpoint);
        var (from, to) = timeout.Waiting;
        var now = time.GetUtcNow();
        if (HugeKey(timeline?.Overlapping(from, to, now) ?? [], timeout.Report) is not var (key, namedBy))
        {
            return;
        }

        var size = timeline?.KeySizes.Known(key, now);
        string measured;
        if (timeline is null)
        {
            measured = string.Empty; // explain, or an endpoint not polled: no server to ask
        }
        else if (size is { Bytes: { } bytes })
        {
            measured = $", {Size(bytes)} (MEMORY USAGE)";
        }
        else if (size is { Unknown: { } why })
        {
            measured = $" (its size unknown: {why})";
        }
        else if (!options.Value.KeySizes)
        {
            measured = " (its size not asked: MuxWatch:KeySizes is off)";
        }
        else if (key.Length > ServerPollRequests.MaxKeyLength)
        {
            measured = $" (its size not asked: the key is over {ServerPollRequests.MaxKeyLength:N0} characters)";
        }
        else
        {
            measured = " (its size is being asked: MEMORY USAGE)";
            timeout.MeasureKey(timeline.Endpoint, key); // the pipeline asks the poller and holds the timeout for the answer
        }

        var line = new Evidence(EvidenceRole.Finding, TimeoutCause.LargePayload, diagnosis.WeightOf(TimeoutCause.LargePayload),
            $"the huge value is {key} ({namedBy}){measured}");
        var at = diagnosis.Evidence.ToList().FindIndex(e => e.Cause == TimeoutCause.LargePayload) is var found and >= 0 ? found + 1 : 0;
        timeout.Diagnosis = diagnosis with { Evidence = [.. diagnosis.Evidence.Take(at), line, .. diagnosis.Evidence.Skip(at)] };
        timeout.Advise(AdviceRank.Culprit, size is { Bytes: { } known }
            ? $"{key} is {Size(known)}: split it into smaller keys, or read it in ranges (GETRANGE, HSCAN, LRANGE pages); "
            : $"{key} is the huge value: split it into smaller keys, or read it in ranges (GETRANGE, HSCAN, LRANGE pages); ");
    }

    /// <summary>The key whose reply was huge, and what named it; null when nothing did.</summary>
    private static (string Key, string NamedBy)? HugeKey(IReadOnlyList<ServerEvent> events, RedisErrorReport report)
    {
        // The slow log's single-value command that ran longest in the wait: the server's own record.
        var logged = events
            .Where(e => e.Kind == ServerEventKind.SlowCommand && e.Command is { } command && TimelineCorrelation.SingleValueCommands.Contains(command)
                && Measurable(e.Argument))
            .MaxBy(e => e.DurationMs ?? 0);
        if (logged is { Argument: { } slowKey })
        {
            return (slowKey, $"the slow log's {logged.Command}, #{logged.SlowlogId}");
        }

        // "active: GET cart:9f3" (3.x), the command the connection was reading; else "next: GET cart:9f3", the command at
        // the head of the queue, the one every request behind it waited for.
        foreach (var field in (string[])["active", "next"])
        {
            // Not the timed-out command's own key: a client may name the command itself there, which says nothing of
            // what it waited behind.
            if (report.Field(field)?.ToString() is { } text && text.Split(' ', 2, StringSplitOptions.TrimEntries) is [var name, var fieldKey]
                && TimelineCorrelation.SingleValueCommands.Contains(name) && Measurable(fieldKey) && fieldKey != report.Key)
            {
                return (fieldKey, $"the message's {field}: {name.ToUpperInvariant()}");
            }
        }

        return null;
    }

    /// <summary>A key as the slow log or a message shows it whole: not redacted, not cut short by Redis or by MuxWatch.</summary>
    private static bool Measurable(string? key) =>
        key is { Length: > 0 } && key != "(redacted)" && !key.EndsWith('…') && !key.EndsWith(" more bytes)", StringComparison.Ordinal);

    /// <summary>A size as people read it: 412.3 MB, 1.2 GB (powers of 1,000).</summary>
    internal static string Size(long bytes) => bytes switch
    {
        >= 1_000_000_000 => string.Create(CultureInfo.InvariantCulture, $"{bytes / 1e9:F1} GB"),
        >= 1_000_000 => string.Create(CultureInfo.InvariantCulture, $"{bytes / 1e6:F1} MB"),
        >= 1_000 => string.Create(CultureInfo.InvariantCulture, $"{bytes / 1e3:F1} kB"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{bytes} bytes"),
    };
}
