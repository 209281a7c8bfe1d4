using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using MuxWatch.Export;
using MuxWatch.Hosting;
using MuxWatch.Json;
using MuxWatch.Probing;
using MuxWatch.Server;
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
    /// loop), <c>GET {prefix}/targets</c> (each watched multiplexer: state, last probe, last error,
    /// servers and their polling; secrets redacted) and <c>GET {prefix}/events?endpoint=host:port&amp;limit=N</c>
    /// (each polled endpoint's timeline: saves, rewrites, forks, slow commands, restarts).
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
        group.MapGet("/status", (MuxWatchStatus status) => Results.Json(status.Read(), MuxWatchJson.TypeInfo<StatusAnswer>()));
        group.MapGet("/targets", (IEnumerable<ITargetStatusSource> sources) =>
            Results.Json(new TargetsAnswer([.. sources.SelectMany(source => source.Targets())]), MuxWatchJson.TypeInfo<TargetsAnswer>()));
        group.MapGet("/events", ListEvents);
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

    private static IResult ListEvents(ServerTimelines timelines, string? endpoint, int? limit)
    {
        var take = Math.Clamp(limit ?? 1000, 0, ServerTimeline.MaxEvents);
        var selected = endpoint is null ? timelines.All : timelines.Find(endpoint) is { } one ? [one] : [];
        if (endpoint is not null && selected.Count == 0)
        {
            return Results.Json(new ErrorAnswer($"no polled endpoint is named '{endpoint}'; GET /events without a query lists them all"),
                MuxWatchJson.TypeInfo<ErrorAnswer>(), statusCode: StatusCodes.Status404NotFound);
        }

        var answer = new EventsAnswer([.. selected.Select(t => new EndpointEvents(t.Endpoint, t.CompleteThrough, t.Status(), t.Events(take)))]);
        return Results.Json(answer, MuxWatchJson.TypeInfo<EventsAnswer>());
    }

    private static IResult ListTimeouts(RecentTimeouts recent, int? limit)
    {
        var timeouts = recent.Newest(Math.Clamp(limit ?? 100, 0, recent.Capacity));
        var answer = new TimeoutsAnswer(timeouts.Count, recent.TotalAdded, [.. timeouts.Select(TimeoutAnswer.From)]);
        return Results.Json(answer, MuxWatchJson.TypeInfo<TimeoutsAnswer>());
    }
}
