using MuxWatch.Service;
using MuxWatch.Service.Api;
using MuxWatch.Service.Commands;
using Prometheus;

if (args.Length > 0 && args[0] == "explain")
{
    return await ExplainCommand.RunAsync(args[1..], Console.In, Console.Out, Console.Error);
}

// The sidecar's own probes must time out because of their targets, never because the sidecar's pool
// was short of threads (on a 2-core host the default minimum is 2, and a burst of completions at a
// stall's end exceeds it): the sidecar owns its process, so it raises its minimum. The library never
// touches an app's pool.
ThreadPool.GetMinThreads(out var minWorkers, out var minIo);
ThreadPool.SetMinThreads(Math.Max(minWorkers, 16), Math.Max(minIo, 16));

// The sidecar's /metrics carries MuxWatch's families and the process' own; the ~170 series of .NET's
// event counters and meters would only bury them (measured: about 200 series on a bare app). The
// process' own come from ProcessMetrics, not prometheus-net's, whose handle count costs 25 ms a scrape
// at 500 endpoints.
Metrics.SuppressDefaultMetrics(new SuppressDefaultMetricOptions { SuppressEventCounters = true, SuppressMeters = true, SuppressProcessMetrics = true });

// The content root is the app's folder, not the working directory: appsettings.json (port 9401, log
// levels) applies wherever the service is started from.
var builder = WebApplication.CreateBuilder(new WebApplicationOptions { Args = args, ContentRootPath = AppContext.BaseDirectory });

// Request lines carry query strings (a token among them, for a careless client): never logged, whatever the configuration.
builder.Logging.AddFilter("Microsoft.AspNetCore.Hosting.Diagnostics", LogLevel.Warning);
builder.Logging.AddFilter("Microsoft.AspNetCore.HttpLogging", LogLevel.None);

// A start-up failure is reported once, plainly, by StartupErrors: not again as a stack trace.
builder.Logging.AddFilter("Microsoft.Extensions.Hosting.Internal.Host", LogLevel.None);

builder.Services.AddMuxWatch().AddTargetsFromConfiguration();
builder.Services.AddTimeoutsApi();
builder.Services.AddMetricsEndpoint();
builder.Services.AddHealth();
builder.Services.AddProblemDetails();
builder.Services.AddSingleton<ResponseStatistics>();
builder.Services.AddSingleton<MuxWatch.Hosting.IMuxWatchStatusSection>(sp => sp.GetRequiredService<ResponseStatistics>());
builder.Services.AddSingleton<ProcessStatistics>();
builder.Services.AddSingleton<MuxWatch.Hosting.IMuxWatchStatusSection>(sp => sp.GetRequiredService<ProcessStatistics>());
builder.Services.AddHostedService(sp => sp.GetRequiredService<ProcessStatistics>());
builder.Services.AddHostedService<ProcessMetrics>();

// A flood of idle sockets is closed at the limit instead of exhausting file descriptors.
// Read here rather than through the validated options, so that a bad value is reported at start with
// every other bad value (ApiOptions validation names it), not alone while the server is built.
var maxConnections = builder.Configuration.GetValue<long?>($"{ApiOptions.SectionName}:{nameof(ApiOptions.MaxConnections)}") is >= 10 and <= 100_000 and var configured
    ? configured
    : new ApiOptions().MaxConnections;
builder.WebHost.ConfigureKestrel(kestrel => kestrel.Limits.MaxConcurrentConnections = maxConnections);

return await StartupErrors.RunAsync(builder, app =>
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
});
