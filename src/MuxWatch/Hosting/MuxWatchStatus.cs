using System.Text.Json;
using System.Text.Json.Serialization;
using MuxWatch.Json;
using MuxWatch.Pipeline;
using MuxWatch.Probing;
using MuxWatch.Timeouts;

namespace MuxWatch.Hosting;

/// <summary>
/// Counters a host adds to MuxWatch's status, such as the sidecar's refused posts. Register
/// implementations in DI; each appears as one object of counts named <see cref="Name"/>.
/// </summary>
public interface IMuxWatchStatusSection
{
    /// <summary>The member the counts are written under, e.g. <c>postsRefused</c>.</summary>
    string Name { get; }

    /// <summary>The counts now, by reason, in a fixed order.</summary>
    IReadOnlyDictionary<string, long> Counts();
}

/// <summary>
/// What MuxWatch recorded and what it could not, so nothing is dropped silently: the answer of
/// <c>/status</c>, built here so that any host (ASP.NET or not) can show it.
/// </summary>
public sealed class MuxWatchStatus(
    TimeoutCounts counts,
    RecentTimeouts recent,
    FirstChanceTimeoutCatcher catcher,
    ProbeLoopHealth loop,
    TimeoutPipeline pipeline,
    IEnumerable<IMuxWatchStatusSection> sections)
{
    /// <summary>The status now.</summary>
    public StatusAnswer Read()
    {
        var byCause = new OrderedDictionary<string, long>();
        foreach (var cause in Enum.GetValues<TimeoutCause>())
        {
            byCause.Add(cause.ToName(), counts.CountOf(cause));
        }

        Dictionary<string, JsonElement>? extra = null;
        foreach (var section in sections)
        {
            extra ??= new Dictionary<string, JsonElement>(StringComparer.Ordinal);
            extra[section.Name] = JsonSerializer.SerializeToElement(section.Counts(), MuxWatchJsonContext.Default.IReadOnlyDictionaryStringInt64);
        }

        return new StatusAnswer
        {
            TotalRecorded = recent.TotalAdded,
            RecordedByCause = byCause,
            CaptureListening = catcher.IsListening,
            CaptureDropped = catcher.Dropped,
            ProbeLoopCycling = loop.IsCycling(out var description),
            ProbeLoop = description,
            InternalFailures = pipeline.InternalFailures + TimeoutMessageReader.InternalFailures,
            Sections = extra,
        };
    }
}

/// <summary>The answer of <c>/status</c>.</summary>
/// <remarks>No constructor parameters: the hosts' sections are extension data, which STJ cannot bind to one.</remarks>
public sealed record StatusAnswer
{
    /// <summary>Timeouts recorded since start.</summary>
    public required long TotalRecorded { get; init; }

    /// <summary>Recorded timeouts by primary cause (a revised diagnosis counts under its final cause).</summary>
    public required IReadOnlyDictionary<string, long> RecordedByCause { get; init; }

    /// <summary>Whether this process's first-chance capture is on.</summary>
    public required bool CaptureListening { get; init; }

    /// <summary>Redis exceptions caught in-process that did not fit the capture queue.</summary>
    public required long CaptureDropped { get; init; }

    /// <summary>Whether the probe loop completed a cycle recently.</summary>
    public required bool ProbeLoopCycling { get; init; }

    /// <summary>The loop's state in words.</summary>
    public required string ProbeLoop { get; init; }

    /// <summary>Failures inside MuxWatch's reader, steps and sinks (0 when healthy).</summary>
    public required long InternalFailures { get; init; }

    /// <summary>The hosts' sections (<see cref="IMuxWatchStatusSection"/>), each a member of its own.</summary>
    [JsonExtensionData]
    public Dictionary<string, JsonElement>? Sections { get; set; }
}
