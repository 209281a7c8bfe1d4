using System.Threading.RateLimiting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using MuxWatch.AspNetCore;
using MuxWatch.Export;
using MuxWatch.Hosting;
using MuxWatch.Json;
using MuxWatch.Sinks;
using MuxWatch.Sources;
using MuxWatch.State;
using Prometheus;

#pragma warning disable IDE0130 // the entry point lives where endpoint-mapping extensions are found
namespace Microsoft.AspNetCore.Builder;
#pragma warning restore IDE0130

/// <summary>Serves MuxWatch's metrics and JSON endpoints from an ASP.NET Core app.</summary>
public static class MuxWatchEndpointRouteBuilderExtensions
{
    /// <summary>The most timeouts one <c>/timeouts</c> answer lists; page on with <c>?before=</c>.</summary>
    public const int MaxPageSize = 1000;

    /// <summary>Listings answered at once; more get 429 at once.</summary>
    public const int MaxConcurrentListings = 4;

    /// <summary>
    /// Maps <c>GET {prefix}/timeouts?limit=N</c> (the recent timeouts, newest first, with cause,
    /// evidence and advice), <c>GET {prefix}/timeouts/{id}</c> (one of them, 404 once pushed out),
    /// <c>GET {prefix}/status</c> (counts by cause, dropped captures, the probe
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

        // Listings are the largest answers: a few at once, the rest refused at once (429), never queued.
        var listings = new ConcurrencyLimiter(new ConcurrencyLimiterOptions { PermitLimit = MaxConcurrentListings, QueueLimit = 0 });
        group.MapGet("/timeouts", (HttpContext context, RecentTimeouts recent, int? limit, long? before) => ListTimeouts(context, listings, recent, limit, before));
        group.MapGet("/timeouts/{id:long}", (RecentTimeouts recent, long id) => recent.Find(id) is { } timeout
            ? Results.Json(TimeoutAnswer.From(timeout), MuxWatchJson.TypeInfo<TimeoutAnswer>())
            : Problems.Result(StatusCodes.Status404NotFound, $"no kept timeout has the id {id}: the newest {recent.Capacity} are kept"));
        group.MapGet("/status", (MuxWatchStatus status) => Results.Json(status.Read(), MuxWatchJson.TypeInfo<StatusAnswer>()));
        group.MapGet("/targets", (IEnumerable<ITargetStatusSource> sources) =>
            Results.Json(new TargetsAnswer([.. sources.SelectMany(source => source.Targets())]), MuxWatchJson.TypeInfo<TargetsAnswer>()));
        group.MapGet("/events", ListEvents);
        group.MapGet("/incidents", (RecentIncidents incidents, string? endpoint, int? limit) =>
            Results.Json(new IncidentsAnswer(incidents.Newest(Math.Clamp(limit ?? 50, 0, RecentIncidents.MaxIncidents), endpoint), incidents.Dropped), MuxWatchJson.TypeInfo<IncidentsAnswer>()));
        group.MapGet("/incidents/{id:long}", (RecentIncidents incidents, ServerTimelines timelines, TimeProvider time, long id) => incidents.Find(id) is { } incident
            ? Results.Json(new IncidentAnswer(incident, IncidentEvents(incident, timelines, time.GetUtcNow())), MuxWatchJson.TypeInfo<IncidentAnswer>())
            : Problems.Result(StatusCodes.Status404NotFound, $"no kept incident has the id {id}: the newest {RecentIncidents.MaxIncidents} are kept"));
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
        var pipeline = endpoints.CreateApplicationBuilder()
            .Use(ChunkedScrapeBuffering.InvokeAsync) // prometheus-net renders (and negotiates the format); the scrape leaves a 256 KiB chunk at a time
            .UseMiddleware<MetricServerMiddleware>(new MetricServerMiddleware.Settings { Registry = registry })
            .Build();
        return endpoints.Map(pattern, pipeline).WithDisplayName("MuxWatch metrics");
    }

    /// <summary>
    /// Serves the status page at <c>{prefix}/</c>: the targets, the recent timeouts with their causes,
    /// and per endpoint a timeline of the last hour with the timeouts drawn against the server's saves,
    /// rewrites, forks, slow commands and restarts; selecting a timeout shows its diagnosis and the
    /// events in its waiting window. The page reads the JSON API mapped by <see cref="MapMuxWatchApi"/>
    /// at <paramref name="apiPrefix"/> and refreshes itself every 5 s.
    /// </summary>
    /// <remarks>
    /// The page itself holds no data; the API does. Protect both the same way, for example
    /// <c>app.MapMuxWatchPage().RequireAuthorization("ops")</c> beside
    /// <c>app.MapMuxWatchApi().RequireAuthorization("ops")</c>. When the API answers 401 (a bearer
    /// token in front of it), the page asks for the token and keeps it in the browser tab only.
    /// </remarks>
    public static RouteGroupBuilder MapMuxWatchPage(this IEndpointRouteBuilder endpoints, string prefix = "/muxwatch", string apiPrefix = "/muxwatch")
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        ArgumentException.ThrowIfNullOrEmpty(prefix);
        ArgumentException.ThrowIfNullOrEmpty(apiPrefix);
        if (prefix[0] != '/' || apiPrefix[0] != '/')
        {
            throw new ArgumentException($"the page's prefix ('{prefix}') and the API's ('{apiPrefix}') must start with '/'");
        }

        var group = endpoints.MapGroup(prefix);
        MuxWatch.AspNetCore.Page.StatusPage.Map(group, prefix, apiPrefix);
        return group;
    }

    /// <summary>What the incident's endpoint's server did over its span, at most 50 events (read from the timeline, never kept twice).</summary>
    private static IReadOnlyList<MuxWatch.Model.ServerEvent> IncidentEvents(MuxWatch.Model.Incident incident, ServerTimelines timelines, DateTimeOffset now) =>
        timelines.Find(incident.Endpoint) is { } timeline ? [.. timeline.Overlapping(incident.Start, incident.End ?? now, now).Take(50)] : [];

    private static IResult ListEvents(ServerTimelines timelines, TimeProvider time, string? endpoint, int? limit)
    {
        var take = Math.Clamp(limit ?? 1000, 0, ServerTimeline.MaxEvents);
        var selected = endpoint is null ? timelines.All : timelines.Find(endpoint) is { } one ? [one] : [];
        if (endpoint is not null && selected.Count == 0)
        {
            return Problems.Result(StatusCodes.Status404NotFound, $"no polled endpoint is named '{endpoint}'; GET /events without a query lists them all");
        }

        var now = time.GetUtcNow();
        var answer = new EventsAnswer([.. selected.Select(t => new EndpointEvents(t.Endpoint, t.CompleteThrough, t.Status(), t.Events(take))
        {
            SlowCommands = t.SlowestCommands(now),
        })]);
        return Results.Json(answer, MuxWatchJson.TypeInfo<EventsAnswer>());
    }

    private static IResult ListTimeouts(HttpContext context, ConcurrencyLimiter listings, RecentTimeouts recent, int? limit, long? before)
    {
        var lease = listings.AttemptAcquire();
        if (!lease.IsAcquired)
        {
            lease.Dispose();
            context.Response.Headers.RetryAfter = "1";
            return Problems.Result(StatusCodes.Status429TooManyRequests, $"more than {MaxConcurrentListings} listings are being answered; try again in a second");
        }

        // Held until the answer has been written, which is where a listing costs memory.
        context.Response.RegisterForDispose(lease);
        var timeouts = recent.Newest(Math.Clamp(limit ?? 100, 0, Math.Min(recent.Capacity, MaxPageSize)), before);
        var next = timeouts.Count > 0 && timeouts.Count == (limit ?? 100) ? timeouts[^1].Id : (long?)null;
        var answer = new TimeoutsAnswer(timeouts.Count, recent.TotalAdded, [.. timeouts.Select(TimeoutAnswer.From)]) { NextBefore = next };
        return Results.Json(answer, MuxWatchJson.TypeInfo<TimeoutsAnswer>());
    }
}
