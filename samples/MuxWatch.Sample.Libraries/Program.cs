using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.SignalR;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.Hybrid;
using MuxWatch.Sample.Libraries;

var builder = WebApplication.CreateBuilder(args);
builder.Services.AddRedisLibraries(builder.Configuration["Redis"] ?? "localhost:6379");

var app = builder.Build();
app.UseOutputCache();

app.MapGet("/cache/{key}", async (string key, IDistributedCache cache) => await cache.GetStringAsync(key) ?? "(none)");
app.MapGet("/hybrid/{key}", async (string key, HybridCache cache) =>
    await cache.GetOrCreateAsync(key, _ => ValueTask.FromResult($"made at {DateTimeOffset.UtcNow:O}")));
app.MapGet("/output", () => $"rendered at {DateTimeOffset.UtcNow:O}").CacheOutput();
app.MapGet("/protect/{text}", (string text, IDataProtectionProvider protection) => protection.CreateProtector("sample").Protect(text));
app.MapHub<ChatHub>("/chat");

app.MapMuxWatchMetrics();   // GET /metrics: muxwatch_connected{multiplexer="distributed-cache"} and the rest
app.MapMuxWatchApi();       // GET /muxwatch/targets lists each library's multiplexer, discovered
app.MapMuxWatchPage();      // GET /muxwatch/

app.Run();

/// <summary>A hub whose messages cross instances through the Redis backplane.</summary>
internal sealed class ChatHub : Hub
{
    public Task Send(string message) => Clients.All.SendAsync("message", message);
}
