using System.Globalization;
using MuxWatch.PrometheusFloor;
using Prometheus;

// MuxWatch.PrometheusFloor <scrape.txt> <url> [--target-by-target]: prometheus-net alone serving, at <url>/metrics, every
// series of a saved scrape, the way the sidecar's /metrics serves them (text format, straight into the response); the
// series made family by family, or with --target-by-target in the order a running exporter makes them (FloorRegistry). /jit tells how many
// methods the JIT has compiled, so the benchmark warms it until its JIT settles (always 0 in a native build).
if (args.Length is not (2 or 3) || (args.Length == 3 && args[2] != "--target-by-target"))
{
    Console.Error.WriteLine("usage: MuxWatch.PrometheusFloor <scrape.txt> <url> [--target-by-target]");
    return 2;
}

var registry = Metrics.NewCustomRegistry();
var series = FloorRegistry.Fill(registry, await File.ReadAllTextAsync(args[0]), targetByTarget: args.Length == 3);
var builder = WebApplication.CreateSlimBuilder();
builder.Logging.ClearProviders();
builder.WebHost.UseUrls(args[1]);
await using var app = builder.Build();
app.MapGet("/metrics", async (HttpContext context) =>
{
    context.Response.ContentType = "text/plain; version=0.0.4; charset=utf-8";
    await registry.CollectAndExportAsTextAsync(context.Response.Body, context.RequestAborted);
});
app.MapGet("/jit", () => System.Runtime.JitInfo.GetCompiledMethodCount().ToString(CultureInfo.InvariantCulture));
await app.StartAsync();
Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"serving {series} series"));
await app.WaitForShutdownAsync();
return 0;
