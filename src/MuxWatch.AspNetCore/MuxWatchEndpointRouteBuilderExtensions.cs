using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using MuxWatch.AspNetCore;
using MuxWatch.Export;
using MuxWatch.Json;
using MuxWatch.Pipeline;
using MuxWatch.Probing;
using MuxWatch.Timeouts;
using Prometheus;

#pragma warning disable IDE0130 // the entry point lives where endpoint-mapping extensions are found
namespace Microsoft.AspNetCore.Builder;
#pragma warning restore IDE0130

/// <summary>Serves MuxWatch's metrics and JSON endpoints from an ASP.NET Core app.</summary>
public static class MuxWatchEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps <c>GET {prefix}/timeouts?limit=N</c> (the recent timeouts, newest first, with cause,
    /// evidence and advice), <c>GET {prefix}/status</c> (counts by cause, dropped captures, the probe
    /// loop) and <c>GET {prefix}/targets</c> (each watched multiplexer: state, last probe, last error,
    /// servers; secrets redacted).
    /// </summary>
    /// <remarks>
    /// Returns the route group, so the app protects it as it protects anything else, for example
    /// <c>app.MapMuxWatchApi().RequireAuthorization("ops")</c> or <c>.RequireHost("*:9401")</c>.
    /// Needs <c>services.AddMuxWatch()</c>.
    /// </remarks>
    public static RouteGroupBuilder MapMuxWatchApi(this IEndpointRouteBuilder endpoints, string prefix = "/muxwatch")
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        var group = endpoints.MapGroup(prefix);
        group.MapGet("/timeouts", ListTimeouts);
        group.MapGet("/status", Status);
        group.MapGet("/targets", (IEnumerable<ITargetStatusSource> sources) =>
            Results.Json(new TargetsAnswer([.. sources.SelectMany(source => source.Targets())]), MuxWatchJsonContext.Default.TargetsAnswer));
        return group;
    }

    /// <summary>
    /// Serves the registry MuxWatch exports to at <paramref name="pattern"/> (default <c>/metrics</c>), in
    /// Prometheus' text format. For apps without a <c>/metrics</c> endpoint of their own; an app that
    /// already maps prometheus-net's needs nothing more, since MuxWatch uses the default registry.
    /// </summary>
    public static IEndpointConventionBuilder MapMuxWatchMetrics(this IEndpointRouteBuilder endpoints, string pattern = "/metrics")
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        var registry = endpoints.ServiceProvider.GetRequiredService<MuxWatchMetrics>().Registry;
        return endpoints.MapMetrics(pattern, registry);
    }

    private static JsonResult ListTimeouts(RecentTimeouts recent, int? limit)
    {
        var timeouts = recent.Newest(Math.Clamp(limit ?? 100, 0, recent.Capacity));
        return JsonResult.Of(writer =>
        {
            writer.WriteStartObject();
            writer.WriteNumber("count", timeouts.Count);
            writer.WriteNumber("totalRecorded", recent.TotalAdded);
            writer.WriteStartArray("timeouts");
            foreach (var timeout in timeouts)
            {
                TimeoutJson.WriteObserved(writer, timeout);
            }

            writer.WriteEndArray();
            writer.WriteEndObject();
        });
    }

    private static JsonResult Status(
        TimeoutCounts counts,
        RecentTimeouts recent,
        FirstChanceTimeoutCatcher catcher,
        ProbeLoopHealth loop,
        TimeoutPipeline pipeline,
        IEnumerable<IMuxWatchStatusSection> sections) =>
        JsonResult.Of(writer =>
        {
            writer.WriteStartObject();
            writer.WriteNumber("totalRecorded", recent.TotalAdded);
            writer.WriteStartObject("recordedByCause");
            foreach (var cause in Enum.GetValues<TimeoutCause>())
            {
                writer.WriteNumber(cause.ToName(), counts.CountOf(cause));
            }

            writer.WriteEndObject();
            writer.WriteBoolean("captureListening", catcher.IsListening);
            writer.WriteNumber("captureDropped", catcher.Dropped);
            writer.WriteBoolean("probeLoopCycling", loop.IsCycling(out var description));
            writer.WriteString("probeLoop", description);
            writer.WriteNumber("internalFailures", pipeline.InternalFailures + TimeoutMessageReader.InternalFailures);
            foreach (var section in sections)
            {
                writer.WritePropertyName(section.Name);
                section.WriteValue(writer);
            }

            writer.WriteEndObject();
        });
}
