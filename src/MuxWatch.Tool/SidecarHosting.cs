using MuxWatch.Hosting;
using MuxWatch.Tool.Api;
using Prometheus;

namespace MuxWatch.Tool;

/// <summary>The sidecar as three calls: prepare the process, add its services, map its endpoints.</summary>
internal static partial class SidecarHosting
{
    /// <summary>
    /// What the sidecar may do because it owns its process (the library never does it to an app): a
    /// thread-pool minimum of its own, and a <c>/metrics</c> without .NET's event counters and meters.
    /// </summary>
    public static void PrepareProcess()
    {
        // The sidecar's own probes must time out because of their targets, never because the sidecar's pool
        // was short of threads (on a 2-core host the default minimum is 2, and a burst of completions at a
        // stall's end exceeds it).
        ThreadPool.GetMinThreads(out var minWorkers, out var minIo);
        ThreadPool.SetMinThreads(Math.Max(minWorkers, 16), Math.Max(minIo, 16));

        // The sidecar's /metrics carries MuxWatch's families and the process' own; the ~170 series of .NET's
        // event counters and meters would only bury them (measured: about 200 series on a bare app). The
        // process' own come from ProcessMetrics, not prometheus-net's, whose handle count costs 25 ms a scrape
        // at 500 endpoints.
        Metrics.SuppressDefaultMetrics(new SuppressDefaultMetricOptions { SuppressEventCounters = true, SuppressMeters = true, SuppressProcessMetrics = true });
    }

    /// <summary>
    /// Every connection MuxWatch makes in this process drops a reply nested too deep for the client to read without
    /// ending the process (Transport/ReplyDepthGuard.cs); on the supported floor's client, which has no tunnel, it cannot.
    /// </summary>
    public static void GuardConnections()
    {
#if CLIENT_TUNNEL
        MuxWatch.StackExchangeRedis.MuxWatchOwnConnections.Configure = Transport.ReplyDepthTunnel.Install;
#endif
    }

    /// <summary>MuxWatch watching the configured targets, and the sidecar's API, metrics, health and statistics.</summary>
    public static WebApplicationBuilder AddMuxWatchSidecar(this WebApplicationBuilder builder)
    {
        // Request lines carry query strings (a token among them, for a careless client): never logged, whatever the configuration.
        builder.Logging.AddFilter("Microsoft.AspNetCore.Hosting.Diagnostics", LogLevel.Warning);
        builder.Logging.AddFilter("Microsoft.AspNetCore.HttpLogging", LogLevel.None);

        // A start-up failure is reported once, plainly, by StartupErrors: not again as a stack trace.
        builder.Logging.AddFilter("Microsoft.Extensions.Hosting.Internal.Host", LogLevel.None);

        GuardConnections();

        // The sidecar watches its configured targets only: no multiplexer of its process is the apps'.
        builder.Services.AddMuxWatch(options => options.DiscoverMultiplexers = false).AddTargetsFromConfiguration();
        builder.Services.AddTimeoutsApi();
        builder.Services.AddMetricsEndpoint();
        builder.Services.AddHealth();
        builder.Services.AddProblemDetails();
        builder.Services.AddSingleton<ResponseStatistics>();
        builder.Services.AddSingleton<IMuxWatchStatusSection>(sp => sp.GetRequiredService<ResponseStatistics>());
        builder.Services.AddSingleton<ProcessStatistics>();
        builder.Services.AddSingleton<IMuxWatchStatusSection>(sp => sp.GetRequiredService<ProcessStatistics>());
        builder.Services.AddHostedService(sp => sp.GetRequiredService<ProcessStatistics>());
        builder.Services.AddHostedService<ProcessMetrics>();

        // A flood of idle sockets is closed at the limit instead of exhausting file descriptors.
        // Read here rather than through the validated options, so that a bad value is reported at start with
        // every other bad value (ApiOptions validation names it), not alone while the server is built.
        var maxConnections = builder.Configuration.GetValue<long?>($"{ApiOptions.SectionName}:{nameof(ApiOptions.MaxConnections)}") is >= 10 and <= 100_000 and var configured
            ? configured
            : new ApiOptions().MaxConnections;
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Limits.MaxConcurrentConnections = maxConnections);
        return builder;
    }

    /// <summary>The sidecar's endpoints: health, <c>/metrics</c>, and the timeouts API, behind status pages, statistics and request timeouts.</summary>
    public static WebApplication MapMuxWatchSidecar(this WebApplication app)
    {
        app.UseStatusCodePages(); // a framework refusal (404, 405, a bad query, a timeout) answers problem details, never an empty body
        app.Use(async (context, next) =>
        {
            await next(context);
            context.RequestServices.GetRequiredService<ResponseStatistics>().Count(context.Response.StatusCode);
        });
        app.UseRequestTimeouts();
        app.MapHealth();
        app.MapMetricsEndpoint();
        app.MapTimeoutsApi();
        app.Lifetime.ApplicationStarted.Register(() =>
        {
            var heapLimitMiB = GC.GetGCMemoryInfo().TotalAvailableMemoryBytes / (1024 * 1024);
            LogMemoryBudget(app.Logger, heapLimitMiB);
        });
        return app;
    }

    /// <summary>The heap the GC may use: the service's own cap, a container's rule, or the machine's memory (docs/reliability.md).</summary>
    [LoggerMessage(EventId = 60, Level = LogLevel.Information,
        Message = "Memory budget: the GC heap may use {HeapLimitMiB} MiB (DOTNET_GCHeapHardLimit changes it, in hex bytes without 0x: 10000000 is 256 MiB; docs/reliability.md)")]
    private static partial void LogMemoryBudget(ILogger logger, long heapLimitMiB);
}
