using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace MuxWatch.Sample.Libraries;

/// <summary>An Aspire app's Redis: Aspire registers the multiplexer (with its health check and tracing); MuxWatch watches it.</summary>
public static class AspireRedis
{
    /// <summary>
    /// <c>AddRedisClient("cache")</c> reads <c>ConnectionStrings:cache</c>, as Aspire's AppHost sets it, and
    /// <c>AddMuxWatch()</c> watches the multiplexer it makes (named <c>aspire</c>), Aspire's defaults kept.
    /// </summary>
    public static IHostApplicationBuilder AddAspireRedis(this IHostApplicationBuilder builder, string connectionName = "cache")
    {
        builder.Services.AddMuxWatch();
        builder.AddRedisClient(connectionName);
        return builder;
    }
}
