using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.AspNetCore.DataProtection.StackExchangeRedis;
using Microsoft.Extensions.DependencyInjection;
using StackExchange.Redis;

namespace MuxWatch.Sample.Libraries;

/// <summary>Where this app's Redis comes from: five libraries, each connecting a multiplexer of its own.</summary>
public static class RedisLibraries
{
    /// <summary>
    /// MuxWatch first, then the libraries. <c>AddMuxWatch()</c> is the only MuxWatch call: every multiplexer the
    /// process connects is watched (named <c>distributed-cache</c>, <c>output-cache</c>, <c>signalr</c>, ...).
    /// </summary>
    public static IServiceCollection AddRedisLibraries(this IServiceCollection services, string redis)
    {
        services.AddMuxWatch();

        // IDistributedCache (session state uses it too), and HybridCache with it as its second level.
        services.AddStackExchangeRedisCache(options =>
        {
            options.Configuration = redis;
            options.InstanceName = "sample:";
        });
        services.AddHybridCache();

        // Output caching, stored in Redis.
        services.AddStackExchangeRedisOutputCache(options => options.Configuration = redis);
        services.AddOutputCache();

        // The SignalR backplane.
        services.AddSignalR().AddStackExchangeRedis(redis, options => options.Configuration.ChannelPrefix = RedisChannel.Literal("sample"));

        // Data Protection's key ring: this library takes a multiplexer the app connects. Here the app's own, made
        // by the container when first needed (and disposed with it); MuxWatch sees that one too.
        services.AddSingleton<IConnectionMultiplexer>(_ => ConnectionMultiplexer.Connect(redis));
        services.AddDataProtection();
        services.AddOptions<KeyManagementOptions>().Configure<IServiceProvider>((options, provider) =>
            options.XmlRepository = new RedisXmlRepository(
                () => provider.GetRequiredService<IConnectionMultiplexer>().GetDatabase(), "sample:data-protection-keys"));
        return services;
    }
}
