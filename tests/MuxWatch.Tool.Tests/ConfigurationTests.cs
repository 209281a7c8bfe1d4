using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>Invalid settings stop the service at start-up with a message naming the setting.</summary>
[Trait("Category", "ServiceProcess")] // run once more on the container's native build by test.sh
public sealed class ConfigurationTests
{
    [Theory]
    [InlineData("MuxWatch:RecentTimeoutCapacity", "0")]
    [InlineData("MuxWatch:CaptureQueueCapacity", "-1")]
    [InlineData("MuxWatch:Api:MaxBodyBytes", "10")]
    [InlineData("MuxWatch:Api:MaxMessagesPerRequest", "0")]
    [InlineData("MuxWatch:Api:MaxConcurrentPosts", "0")]
    [InlineData("MuxWatch:Api:BearerToken", "short")]
    [InlineData("MuxWatch:ProbeInterval", "00:00:00")]
    [InlineData("MuxWatch:ProbeInterval", "-00:00:01")]
    [InlineData("MuxWatch:ProbeTimeout", "00:00:00")]
    [InlineData("MuxWatch:ServerPollInterval", "00:00:00")]
    [InlineData("MuxWatch:ServerPollTimeout", "00:10:00")]
    [InlineData("MuxWatch:ServerTimelineRetention", "00:00:01")]
    [InlineData("MuxWatch:CorrelationSettleTimeout", "-00:00:01")]
    [InlineData("MuxWatch:Api:BearerToken", " padded-token-0123456789 ")]
    [InlineData("MuxWatch:Api:MaxConnections", "1")]
    [InlineData("MuxWatch:Api:BodyReadTimeout", "00:00:00")]
    [InlineData("Urls", "garbage")]
    [InlineData("Urls", "http://127.0.0.1:99999")]
    [InlineData("Urls", "http://[::1:19411")] // issue 26, #7: Kestrel listened on every interface at 19411
    [InlineData("Urls", "http://127.0.0.1:9401:")] // ... and these two on every interface at port 80
    [InlineData("Urls", "http://[::1]9401")]
    [InlineData("MuxWatch:Targets:0:ConnectionString", "localhost:6379,password=hunter2-never-shown,notAnOption=1")]
    [InlineData("MuxWatch:Targets:0:ConnectionString", ",,,")]
    [InlineData("MuxWatch:Targets:0:ConnectionString", "localhost:6379,password=hunter2-never-shown,tail-of-it")] // issue 26, #10: a comma in a password
    [InlineData("MuxWatch:Targets:0:PasswordFile", "/nonexistent/muxwatch-password")]
    [InlineData("MuxWatch:Targets:0:TrustedCaFile", "/nonexistent/muxwatch-ca.pem")]
    [InlineData("MuxWatch:Targets:0:TrustedCaFile", "/proc/version")] // a file, but no certificate
    [InlineData("MuxWatch:Targets:0:Name", "has spaces and {braces}")]
    public async Task An_invalid_setting_exits_non_zero_naming_it(string setting, string value)
    {
        var port = FreePort.Next();
        var info = BuiltProgram.StartInfo("MuxWatch.Tool", "--urls", $"http://127.0.0.1:{port}", $"--{setting}={value}");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info);

        Assert.NotEqual(0, exitCode);
        Assert.Contains(setting, output + error, StringComparison.Ordinal);
        if (setting.EndsWith("BearerToken", StringComparison.Ordinal))
        {
            Assert.DoesNotContain($"={value}", output + error, StringComparison.Ordinal);
        }

        Assert.DoesNotContain("hunter2-never-shown", output + error, StringComparison.Ordinal);
        Assert.DoesNotContain("tail-of-it", output + error, StringComparison.Ordinal);
    }

    /// <summary>Issue 38, #4: a 50 MB file was read and sent as the password (the target then failed with InternalFailure).</summary>
    [Fact]
    public async Task A_password_file_too_large_to_be_a_password_is_refused_at_start_naming_the_setting()
    {
        var file = Path.GetTempFileName();
        try
        {
            await File.WriteAllTextAsync(file, "hunter2-never-shown" + new string('x', 50_000));
            var info = BuiltProgram.StartInfo("MuxWatch.Tool", "--urls", $"http://127.0.0.1:{FreePort.Next()}",
                "--MuxWatch:Targets:0:Name=cache", "--MuxWatch:Targets:0:ConnectionString=localhost:6379", $"--MuxWatch:Targets:0:PasswordFile={file}");

            var (exitCode, output, error) = await BuiltProgram.RunAsync(info);

            Assert.NotEqual(0, exitCode);
            Assert.Contains("MuxWatch:Targets:0:PasswordFile", output + error, StringComparison.Ordinal);
            Assert.Contains("at most 4096", output + error, StringComparison.Ordinal);
            Assert.DoesNotContain("hunter2-never-shown", output + error, StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(file);
        }
    }

    [Fact]
    public async Task Two_targets_with_one_name_exit_non_zero_naming_the_setting()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Tool", "--urls", $"http://127.0.0.1:{FreePort.Next()}",
            "--MuxWatch:Targets:0:Name=cache", "--MuxWatch:Targets:0:ConnectionString=localhost:6379",
            "--MuxWatch:Targets:1:Name=Cache", "--MuxWatch:Targets:1:ConnectionString=localhost:6380");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info);

        Assert.NotEqual(0, exitCode);
        Assert.Contains("MuxWatch:Targets:1:Name", output + error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_setting_that_is_not_a_number_exits_non_zero_naming_it()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Tool", "--urls", $"http://127.0.0.1:{FreePort.Next()}", "--MuxWatch:RecentTimeoutCapacity=lots");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info);

        Assert.NotEqual(0, exitCode);
        Assert.Contains("RecentTimeoutCapacity", output + error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Every_bad_setting_is_named_at_once_and_a_misspelled_key_is_warned_about()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Tool", "--urls", $"http://127.0.0.1:{FreePort.Next()}",
            "--MuxWatch:ProbeInterval=0", "--MuxWatch:Api:MaxConcurrentPosts=0", "--MuxWatch:ServerPollTimeout=00:10:00", "--MuxWatch:ProbeIntervall=00:00:01");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info);

        Assert.Equal(2, exitCode);
        foreach (var setting in (string[])["MuxWatch:ProbeInterval ", "MuxWatch:Api:MaxConcurrentPosts", "MuxWatch:ServerPollTimeout"])
        {
            Assert.Contains(setting, error, StringComparison.Ordinal);
        }

        Assert.Contains("Unknown setting MuxWatch:ProbeIntervall", output + error, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", output + error, StringComparison.Ordinal); // no stack trace
    }

    [Fact]
    public async Task A_port_in_use_exits_non_zero_naming_the_setting_without_a_crash()
    {
        using var taken = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        taken.Start();
        var port = ((System.Net.IPEndPoint)taken.LocalEndpoint).Port;

        var (exitCode, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "--urls", $"http://127.0.0.1:{port}"));

        Assert.Equal(2, exitCode);
        Assert.Contains("Urls", error, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", output + error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Started_from_another_directory_it_still_reads_its_appsettings()
    {
        // appsettings.json sets the port, 9401; with the content root at the working directory it would
        // be ignored and the service would listen on 5000.
        var info = BuiltProgram.StartInfo("MuxWatch.Tool", "--MuxWatch:Targets:0:Name=none", $"--MuxWatch:Targets:0:ConnectionString=127.0.0.1:{FreePort.Next()}");
        info.WorkingDirectory = Path.GetTempPath();
        using var process = System.Diagnostics.Process.Start(info)!;
        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, _) => { };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        try
        {
            using var client = new HttpClient { BaseAddress = new Uri("http://127.0.0.1:9401"), Timeout = TimeSpan.FromSeconds(5) };
            await Eventually.UntilAsync(
                async () => !process.HasExited && (await client.GetAsync(new Uri("/healthz", UriKind.Relative))).IsSuccessStatusCode,
                "the service started from the temp directory to answer on appsettings.json's port 9401");
        }
        finally
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
        }
    }
}
