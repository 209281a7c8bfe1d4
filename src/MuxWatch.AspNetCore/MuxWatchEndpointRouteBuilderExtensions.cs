using System.Text.Json;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using MuxWatch.AspNetCore;
using MuxWatch.Timeouts;

#pragma warning disable IDE0130 // the entry point lives where endpoint-mapping extensions are found
namespace Microsoft.AspNetCore.Builder;
#pragma warning restore IDE0130

/// <summary>Serves MuxWatch's JSON endpoints from an ASP.NET Core app.</summary>
public static class MuxWatchEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps <c>GET {prefix}/timeouts?limit=N</c> (the recent timeouts, newest first, with cause,
    /// evidence and advice) and <c>GET {prefix}/status</c> (counts by cause, dropped captures).
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
        return group;
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
        TimeoutRecorder recorder,
        RecentTimeouts recent,
        FirstChanceTimeoutCatcher catcher,
        IEnumerable<IMuxWatchStatusSection> sections) =>
        JsonResult.Of(writer =>
        {
            writer.WriteStartObject();
            writer.WriteNumber("totalRecorded", recent.TotalAdded);
            writer.WriteStartObject("recordedByCause");
            foreach (var cause in Enum.GetValues<TimeoutCause>())
            {
                writer.WriteNumber(cause.ToName(), recorder.CountOf(cause));
            }

            writer.WriteEndObject();
            writer.WriteBoolean("captureListening", catcher.IsListening);
            writer.WriteNumber("captureDropped", catcher.Dropped);
            foreach (var section in sections)
            {
                writer.WritePropertyName(section.Name);
                section.WriteValue(writer);
            }

            writer.WriteEndObject();
        });
}
