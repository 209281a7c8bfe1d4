using System.Collections;
using System.Reflection;
using Microsoft.Extensions.DependencyInjection;
using StackExchange.Redis;
using StackExchange.Redis.Configuration;

namespace MuxWatch.Libraries.Tests;

/// <summary>
/// Discovery's options providers change no default the client would have chosen: every public setting of the
/// <see cref="ConfigurationOptions"/> a configuration string gives, with MuxWatch in the process, equals the same
/// string's under the provider the client picks without it (the plain one, or Azure's for an Azure endpoint).
/// </summary>
public sealed class ClientDefaultsTests
{
    public ClientDefaultsTests() => new ServiceCollection().AddMuxWatch(); // registers MuxWatch's providers, once per process

    public static TheoryData<string, string> Configurations() => new()
    {
        { "localhost:6379", "plain" },
        { "10.0.0.7:6379,ssl=true,syncTimeout=2500", "plain" },
        { "cache-7.redis.cache.windows.net:6380,password=secret", "azure" },
        { "cache-7.redis.cache.windows.net:6379", "azure" },
        { "cache-7.redis.cache.chinacloudapi.cn:6380", "azure" },
    };

    [Theory]
    [MemberData(nameof(Configurations))]
    public void Every_setting_the_client_ends_up_with_is_the_one_it_would_have_chosen_without_MuxWatch(string configuration, string provider)
    {
        var withMuxWatch = ConfigurationOptions.Parse(configuration);
        var without = ConfigurationOptions.Parse(configuration);
        without.Defaults = provider == "azure" ? new AzureOptionsProvider() : new DefaultOptionsProvider();

        // MuxWatch's stand-in is the client's own type, or a subclass that inherits it whole.
        Assert.IsAssignableFrom(without.Defaults.GetType(), withMuxWatch.Defaults);
        var differences = Settings().Where(p => !Same(p.GetValue(withMuxWatch), p.GetValue(without)))
            .Select(p => $"{p.Name}: {p.GetValue(withMuxWatch)} against {p.GetValue(without)}").ToList();
        Assert.Empty(differences);
        if (provider == "azure")
        {
            Assert.False(withMuxWatch.AbortOnConnectFail); // Azure's defaults, not the plain ones
        }
    }

    [Fact]
    public void The_comparison_sees_a_changed_default()
    {
        var plain = ConfigurationOptions.Parse("localhost:6379");
        plain.Defaults = new DefaultOptionsProvider();
        var azure = ConfigurationOptions.Parse("localhost:6379");
        azure.Defaults = new AzureOptionsProvider();
        Assert.Contains(Settings(), p => !Same(p.GetValue(plain), p.GetValue(azure)));
    }

    private static IEnumerable<PropertyInfo> Settings() =>
        typeof(ConfigurationOptions).GetProperties(BindingFlags.Public | BindingFlags.Instance)
            .Where(p => p.CanRead && p.GetIndexParameters().Length == 0 && p.Name != nameof(ConfigurationOptions.Defaults)
                && p.GetCustomAttribute<ObsoleteAttribute>() is null);

    private static bool Same(object? a, object? b) => (a, b) switch
    {
        (null, null) => true,
        (IEnumerable x, IEnumerable y) when a is not string => x.Cast<object>().Select(o => o?.ToString()).SequenceEqual(y.Cast<object>().Select(o => o?.ToString())),
        _ => Equals(a, b) || a?.ToString() == b?.ToString(),
    };
}
