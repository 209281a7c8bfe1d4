// An ASP.NET Core app on OpenTelemetry: MuxWatch publishes through its meter only, and OpenTelemetry's
// Prometheus exporter serves /metrics. Usage: MuxWatch.OtelApp --urls http://127.0.0.1:PORT --Redis host:port,...
using MuxWatch.Export;
using OpenTelemetry.Metrics;
using StackExchange.Redis;

var builder = WebApplication.CreateBuilder(args);
builder.Logging.ClearProviders();

var redis = builder.Configuration["Redis"] ?? "localhost:6379";
builder.Services.AddSingleton<IConnectionMultiplexer>(_ => ConnectionMultiplexer.Connect(redis));

// MuxWatch through the meter only: its prometheus-net families go to a registry nothing serves.
builder.Services.AddMuxWatch()
    .AddMultiplexer("cache", services => services.GetRequiredService<IConnectionMultiplexer>())
    .UseMetricsRegistry(Prometheus.Metrics.NewCustomRegistry());

builder.Services.AddOpenTelemetry().WithMetrics(metrics => metrics
    .AddMeter("MuxWatch") // the meter's name, as OpenTelemetry's guide has an app write it
    .AddView("muxwatch.*", new MetricStreamConfiguration { CardinalityLimit = 10_000 }) // the SDK keeps 2,000 series per instrument by default
    .AddPrometheusExporter());

var app = builder.Build();

app.MapGet("/cache/{key}", async (string key, IConnectionMultiplexer multiplexer) =>
{
    try
    {
        var value = await multiplexer.GetDatabase().StringGetAsync(key);
        return Results.Ok(new { key, value = (string?)value });
    }
    catch (RedisTimeoutException)
    {
        return Results.StatusCode(StatusCodes.Status503ServiceUnavailable);
    }
});
app.MapPrometheusScrapingEndpoint(); // GET /metrics, OpenTelemetry's exporter

app.Run();
