using System.Net.Sockets;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Tool.Api;
using MuxWatch.StackExchangeRedis;

namespace MuxWatch.Tool;

/// <summary>
/// Runs the service so that every bad setting ends start-up with one plain message naming it (all of
/// them at once) and exit code 2, never a crash: options, the listening address, misspelled keys.
/// </summary>
internal static partial class StartupErrors
{
    public static async Task<int> RunAsync(WebApplicationBuilder builder, Action<WebApplication> configure)
    {
        if (UrlsProblem(builder.Configuration[WebHostDefaults.ServerUrlsKey]) is { } urlsProblem)
        {
            await Console.Error.WriteLineAsync($"muxwatch: invalid configuration: {urlsProblem}").ConfigureAwait(false);
            return 2;
        }

        WebApplication? app = null;
        try
        {
            // Building resolves options too (Kestrel's limits read MuxWatch:Api): inside the guard.
            app = builder.Build();
            WarnAboutUnknownSettings(app.Configuration, app.Logger);

            // Every ValidateOnStart option at once, before anything reads one: all bad settings in one message.
            app.Services.GetService<IStartupValidator>()?.Validate();
            configure(app);
            await app.StartAsync().ConfigureAwait(false);
        }
        catch (Exception ex) when (Describe(ex, builder.Configuration) is { } problem)
        {
            await Console.Error.WriteLineAsync($"muxwatch: invalid configuration: {problem}").ConfigureAwait(false);
            if (app is not null)
            {
                await app.DisposeAsync().ConfigureAwait(false);
            }

            return 2;
        }

        await app.WaitForShutdownAsync().ConfigureAwait(false);
        await app.DisposeAsync().ConfigureAwait(false);
        return 0;
    }

    /// <summary>What is wrong with <c>Urls</c>, or null.</summary>
    /// <remarks>
    /// Kestrel reads a listening address leniently: <c>http://[::1:19411</c> listens on every interface at 19411, <c>http://127.0.0.1:9401:</c> and <c>http://[::1]9401</c> on every
    /// interface at port 80, with the API open. Each address must read back as exactly what was written:
    /// <c>http</c> or <c>https</c>, a host (a name, an IPv4 address, a bracketed IPv6 address, <c>*</c> or
    /// <c>+</c>), an optional port of 0 to 65535, nothing else.
    /// </remarks>
    internal static string? UrlsProblem(string? urls)
    {
        if (string.IsNullOrWhiteSpace(urls))
        {
            return null;
        }

        foreach (var url in urls.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            var match = ListeningAddress().Match(url);
            var host = match.Groups["host"].Value;
            var valid = match.Success
                && (match.Groups["port"].Value is not { Length: > 0 } port || int.Parse(port, System.Globalization.CultureInfo.InvariantCulture) <= 65535)
                && (host.StartsWith('[')
                    ? System.Net.IPAddress.TryParse(host[1..^1], out var v6) && v6.AddressFamily == AddressFamily.InterNetworkV6
                    : !host.All(c => char.IsAsciiDigit(c) || c == '.') || System.Net.IPAddress.TryParse(host, out _));
            if (!valid)
            {
                return $"Urls ({url}): not a listening address as written; use http://HOST:PORT with HOST a name, an IPv4 address, [an IPv6 address], * or + (several separated by ;)";
            }
        }

        return null;
    }

    [System.Text.RegularExpressions.GeneratedRegex(@"^https?://(?<host>\[[0-9A-Fa-f:.%a-z]+\]|\*|\+|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(?::(?<port>[0-9]{1,5}))?/?$")]
    private static partial System.Text.RegularExpressions.Regex ListeningAddress();

    /// <summary>What is wrong, in words naming the setting; null for an error that is no configuration problem.</summary>
    internal static string? Describe(Exception exception, IConfiguration configuration)
    {
        try
        {
            return DescribeCore(exception, configuration);
        }
#pragma warning disable CA1031 // describing must never hide the original failure
        catch (Exception)
#pragma warning restore CA1031
        {
            return null;
        }
    }

    private static string? DescribeCore(Exception exception, IConfiguration configuration)
    {
        var urls = configuration["urls"] ?? configuration["Urls"] ?? "(default)";
        return exception switch
        {
            OptionsValidationException options => string.Join(" ", options.Failures),
            AggregateException aggregate when aggregate.InnerExceptions.All(e => Describe(e, configuration) is not null) =>
                string.Join(" ", aggregate.InnerExceptions.Select(e => Describe(e, configuration))),
            InvalidOperationException invalid when invalid.Message.Contains("configuration value", StringComparison.OrdinalIgnoreCase) => invalid.Message,
            IOException { InnerException: SocketException } or IOException when exception.Message.Contains("address", StringComparison.OrdinalIgnoreCase) =>
                $"Urls ({urls}): cannot listen there: {exception.Message}",
            FormatException or ArgumentException or InvalidOperationException when exception.StackTrace?.Contains("Kestrel", StringComparison.Ordinal) == true
                || exception.Message.Contains("url", StringComparison.OrdinalIgnoreCase) || exception.Message.Contains("address", StringComparison.OrdinalIgnoreCase) =>
                $"Urls ({urls}): {exception.Message}",
            _ => null,
        };
    }

    /// <summary>A misspelled <c>MuxWatch:*</c> key would be ignored silently: say so at start.</summary>
    private static void WarnAboutUnknownSettings(IConfiguration configuration, ILogger logger)
    {
        var section = configuration.GetSection(MuxWatchOptions.SectionName);
        var known = typeof(MuxWatchOptions).GetProperties().Select(p => p.Name).Append("Api").Append("Metrics").Append("Targets").ToHashSet(StringComparer.OrdinalIgnoreCase);
        var knownMetrics = typeof(MetricsOptions).GetProperties().Select(p => p.Name).ToHashSet(StringComparer.OrdinalIgnoreCase);
        var knownApi = typeof(ApiOptions).GetProperties().Select(p => p.Name).ToHashSet(StringComparer.OrdinalIgnoreCase);
        foreach (var child in section.GetChildren())
        {
            if (!known.Contains(child.Key))
            {
                LogUnknownSetting(logger, child.Path);
            }
        }

        foreach (var child in section.GetSection("Api").GetChildren().Where(c => !knownApi.Contains(c.Key)))
        {
            LogUnknownSetting(logger, child.Path);
        }

        foreach (var child in section.GetSection("Metrics").GetChildren().Where(c => !knownMetrics.Contains(c.Key)))
        {
            LogUnknownSetting(logger, child.Path);
        }

        foreach (var target in section.GetSection("Targets").GetChildren())
        {
            foreach (var child in target.GetChildren().Where(c => !KnownTargetSettings.Contains(c.Key)))
            {
                LogUnknownSetting(logger, child.Path);
            }
        }
    }

    private static readonly HashSet<string> KnownTargetSettings = new(StringComparer.OrdinalIgnoreCase)
    {
        nameof(TargetOptions.Name), nameof(TargetOptions.ConnectionString), nameof(TargetOptions.PasswordFile), nameof(TargetOptions.TrustedCaFile),
    };

    [LoggerMessage(EventId = 50, Level = LogLevel.Warning, Message = "Unknown setting {Setting} is ignored: check its spelling against the README's configuration table")]
    private static partial void LogUnknownSetting(ILogger logger, string setting);
}
