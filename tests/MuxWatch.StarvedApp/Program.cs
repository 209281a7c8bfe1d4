// Usage: MuxWatch.StarvedApp <host:port>
// Prints every timeout MuxWatch recorded, one JSON object per line, then exits 0.
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Timeouts;
using StackExchange.Redis;

var endpoint = args.Length == 1 ? args[0] : throw new ArgumentException("usage: MuxWatch.StarvedApp <host:port>");

var builder = Host.CreateApplicationBuilder();
builder.Logging.ClearProviders(); // standard output carries only the JSON lines
builder.Services.AddMuxWatch();
using var host = builder.Build();
await host.StartAsync();

using var redis = await ConnectionMultiplexer.ConnectAsync($"{endpoint},syncTimeout=1000");
var db = redis.GetDatabase();
db.StringSet("muxwatch:starved", "value");

// Starve the pool: far more blocking work items than the pool's minimum. Replies from Redis are
// processed on pool threads, so a synchronous GET now waits for a thread that does not come.
using var release = new ManualResetEventSlim();
for (var i = 0; i < 300; i++)
{
    ThreadPool.UnsafeQueueUserWorkItem(_ => release.Wait(), null);
}

var timedOut = false;
var caller = new Thread(() =>
{
    for (var attempt = 0; attempt < 20 && !timedOut; attempt++)
    {
        try
        {
            db.StringGet("muxwatch:starved");
        }
        catch (RedisTimeoutException)
        {
            timedOut = true;
        }
    }
});
caller.Start();
caller.Join();
release.Set();

var recent = host.Services.GetRequiredService<RecentTimeouts>();
var deadline = DateTime.UtcNow.AddSeconds(30);
while (timedOut && recent.TotalAdded == 0 && DateTime.UtcNow < deadline)
{
    await Task.Delay(50);
}

using var stdout = Console.OpenStandardOutput();
foreach (var timeout in recent.Newest())
{
    using (var writer = new Utf8JsonWriter(stdout, TimeoutJson.WriterOptions))
    {
        TimeoutJson.WriteObserved(writer, timeout);
    }

    stdout.Write("\n"u8);
}

await host.StopAsync();
return timedOut ? 0 : 3;
