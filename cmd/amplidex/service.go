package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query/lint"
	"github.com/spf13/cobra"
)

// serviceOptions are the flags of `amplidex service`.
type serviceOptions struct {
	print bool
}

func newServiceCmd(a *App) *cobra.Command {
	opts := &serviceOptions{}
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Run the daemon as a user service: systemd socket activation on Linux, a launchd agent on macOS",
		Long: "service install writes a systemd user socket and service ($XDG_CONFIG_HOME/systemd/user/amplidex.socket\n" +
			"and amplidex.service): systemd makes the socket and starts the daemon on the first connection. On macOS\n" +
			"it writes a launchd agent (~/Library/LaunchAgents/" + service.LaunchdLabel + ".plist) that runs the daemon at login.\n" +
			"The files carry this shell's AMPLIDEX_HOME, AMPLIDEX_BUNDLED, AMPLIFIER_AGENT_HOME and XDG_* variables.",
	}
	install := &cobra.Command{
		Use:   "install",
		Short: "Write the service files and enable them (--print shows them instead)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runServiceInstall(cmd.Context(), opts)
		},
	}
	install.Flags().BoolVar(&opts.print, "print", false, "print the files instead of writing them")
	cmd.AddCommand(install, &cobra.Command{
		Use:   "uninstall",
		Short: "Disable the service and remove its files",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runServiceUninstall(cmd.Context())
		},
	}, &cobra.Command{
		Use:   "status",
		Short: "Show whether the service is installed and running (exit 1 when not installed)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runServiceStatus(cmd.Context())
		},
	})
	return cmd
}

// serviceSetup returns the workspace and the files of this system's
// service manager.
func (a *App) serviceSetup() (*lint.Workspace, []service.File, error) {
	ws, err := a.workspace()
	if err != nil {
		return nil, nil, err
	}
	spec, err := a.launcher().Spec(ws)
	if err != nil {
		return nil, nil, exitf(exitUsage, "service: %v", err)
	}
	files, err := service.Files(runtime.GOOS, spec, a.Getenv)
	if err != nil {
		return nil, nil, exitf(exitUsage, "service: %v", err)
	}
	return ws, files, nil
}

func (a *App) runServiceInstall(ctx context.Context, opts *serviceOptions) error {
	ws, files, err := a.serviceSetup()
	if err != nil {
		return err
	}
	if opts.print {
		for i, f := range files {
			if i > 0 {
				fmt.Fprintln(a.Stdout)
			}
			fmt.Fprintf(a.Stdout, "# %s\n%s", f.Path, f.Content)
		}
		return nil
	}
	return a.launcher().Install(ctx, ws, files, a.Stdout)
}

func (a *App) runServiceUninstall(ctx context.Context) error {
	_, files, err := a.serviceSetup()
	if err != nil {
		return err
	}
	return a.launcher().Uninstall(ctx, files, a.Stdout)
}

func (a *App) runServiceStatus(ctx context.Context) error {
	ws, files, err := a.serviceSetup()
	if err != nil {
		return err
	}
	rows, installed := a.launcher().ServiceStatus(ctx, ws, files)
	if err := service.PrintStatus(a.Stdout, rows, isTerminal(a.Stdout)); err != nil {
		return err
	}
	if !installed {
		return exitCode(exitFailed)
	}
	return nil
}
