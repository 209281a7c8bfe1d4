using System.Globalization;
using MuxWatch.PrometheusFloor;
using Prometheus;

// MuxWatch.PrometheusFloor <scrape.txt> <url>: prometheus-net alone serving, at <url>/metrics, every series of a saved
// scrape, the way the sidecar's /metrics serves them (text format, straight into the response). /jit tells how many
// methods the JIT has compiled, so the benchmark warms it until its JIT settles (always 0 in a native build).
if (args.Length != 2)
{
    Console.Error.WriteLine("usage: MuxWatch.PrometheusFloor <scrape.txt> <url>");
    return 2;
}

var registry = Metrics.NewCustomRegistry();
var series = FloorRegistry.Fill(registry, await File.ReadAllTextAsync(args[0]));
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
