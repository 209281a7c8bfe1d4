using Microsoft.Extensions.Options;
using MuxWatch.Service.Api;
using MuxWatch.Service.Commands;

if (args.Length > 0 && args[0] == "explain")
{
    return await ExplainCommand.RunAsync(args[1..], Console.In, Console.Out, Console.Error);
}

var builder = WebApplication.CreateBuilder(args);
builder.Services.AddMuxWatch();
builder.Services.AddTimeoutsApi();

var app = builder.Build();
app.UseRequestTimeouts();
app.UseRateLimiter();
app.MapHealth();
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
