using System.Reflection;

namespace MuxWatch.Service.Commands;

/// <summary>The <c>muxwatch</c> command line: its commands, its help, its exit codes.</summary>
internal static class CommandLine
{
    /// <summary>Exit code: the command did what was asked (a message was read and explained, help shown).</summary>
    public const int Read = 0;

    /// <summary>Exit code: there was nothing to read (empty input, a file that cannot be read).</summary>
    public const int NothingToRead = 1;

    /// <summary>Exit code: the command line was wrong (an unknown command or option).</summary>
    public const int BadUsage = 2;

    /// <summary>The informational version (0.1.0, or 0.1.0-rc.1+commit).</summary>
    public static string Version { get; } =
        typeof(CommandLine).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion ?? "unknown";

    public const string Usage = """
        muxwatch: explains StackExchange.Redis timeouts, and runs the MuxWatch sidecar.

        usage:
          muxwatch explain [--jsonl] [FILE]   explain a timeout message read from FILE or standard input
          muxwatch serve [OPTIONS]            run the sidecar (default http://localhost:9401: /metrics, /api/...)
          muxwatch --help | --version

        explain:
          --jsonl          read JSON lines, each {"message": "..."}; write one JSON object per line
        serve:
          --urls URL       where to listen (also ASPNETCORE_URLS)
          --MuxWatch:Targets:0:Name=cache --MuxWatch:Targets:0:ConnectionString=redis:6379
                           any setting as --Section:Key=value (or MuxWatch__Section__Key in the environment)

        exit codes: 0 read, 1 nothing to read (empty input, unreadable file), 2 bad usage;
                    serve: 0 stopped, 2 configuration or address refused at start (each setting named)
        documentation: https://github.com/muxwatch/muxwatch
        """;
}
