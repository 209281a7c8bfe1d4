using System.Text.Json;
using MuxWatch.Json;
using MuxWatch.Model;
using MuxWatch.Pipeline;
using MuxWatch.Reading;
using MuxWatch.Sinks;
using MuxWatch.Sources;
using MuxWatch.State;

namespace MuxWatch.Hosting;

/// <summary>
/// What MuxWatch recorded and what it could not, so nothing is dropped silently: the answer of
/// <c>/status</c>, built here so that any host (ASP.NET or not) can show it.
/// </summary>
public sealed class MuxWatchStatus
{
    private readonly TimeoutCounts counts;
    private readonly RecentTimeouts recent;
    private readonly FirstChanceRedisErrorCatcher catcher;
    private readonly ProbeLoopHealth loop;
    private readonly TimeoutPipeline pipeline;
    private readonly IEnumerable<IMuxWatchStatusSection> sections;
    private readonly PoolStackCaptures? poolStacks;

    // Internal: what it reads is MuxWatch's own; AddMuxWatch registers it with a factory.
    internal MuxWatchStatus(
        TimeoutCounts counts,
        RecentTimeouts recent,
        FirstChanceRedisErrorCatcher catcher,
        ProbeLoopHealth loop,
        TimeoutPipeline pipeline,
        IEnumerable<IMuxWatchStatusSection> sections,
        PoolStackCaptures? poolStacks = null)
    {
        this.poolStacks = poolStacks;
        this.counts = counts;
        this.recent = recent;
        this.catcher = catcher;
        this.loop = loop;
        this.pipeline = pipeline;
        this.sections = sections;
    }

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
            PoolStacks = poolStacks is null ? null : new PoolStacksAnswer(poolStacks.CapturingSince is not null, poolStacks.Unavailable, [.. poolStacks.All.Reverse()]),
        };
    }
}
