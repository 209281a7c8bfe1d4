using Microsoft.Extensions.Options;
using MuxWatch.Service.Api;
using MuxWatch.Service.Commands;
using Prometheus;

if (args.Length > 0 && args[0] == "explain")
{
    return await ExplainCommand.RunAsync(args[1..], Console.In, Console.Out, Console.Error);
}

// The sidecar's /metrics carries MuxWatch's families and the process' own; the ~170 series of .NET's
// event counters and meters would only bury them (measured: about 200 series on a bare app).
Metrics.SuppressDefaultMetrics(new SuppressDefaultMetricOptions { SuppressEventCounters = true, SuppressMeters = true });

var builder = WebApplication.CreateBuilder(args);
builder.Services.AddMuxWatch().AddTargetsFromConfiguration();
builder.Services.AddTimeoutsApi();
builder.Services.AddHealth();

var app = builder.Build();
app.UseRequestTimeouts();
app.UseRateLimiter();
app.MapHealth();
app.MapMuxWatchMetrics();
app.MapTimeoutsApi();

try
{
    await app.RunAsync();
    return 0;
}
catch (OptionsValidationException ex)
{
    // Bad configuration: say which setting, plainly, and stop.
    await Console.Error.WriteLineAsync($"muxwatch: invalid configuration: {string.Join(" ", ex.Failures)}");
    return 2;
}
catch (InvalidOperationException ex) when (ex.Message.Contains("configuration value", StringComparison.OrdinalIgnoreCase))
{
    await Console.Error.WriteLineAsync($"muxwatch: invalid configuration: {ex.Message}");
    return 2;
}
